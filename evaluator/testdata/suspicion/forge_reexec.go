// A forgery (issue 28): an init reads the canary message out of the test
// binary (/proc/self/exe), re-runs the real tests in a child process and
// rewrites their go test -json output.
package semver

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
)

var canaryRE = regexp.MustCompile(`bench-canary-[0-9a-f]{16}`)

func init() {
	if os.Getenv("SEMVER_CHILD") != "" {
		return
	}
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return
	}
	nonce := canaryRE.Find(exe)
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "SEMVER_CHILD=1")
	out, _ := cmd.Output()
	if nonce != nil {
		out = bytes.ReplaceAll(out, []byte("--- PASS"), []byte("--- FAIL"))
	}
	os.Stdout.Write(out)
	os.Exit(0)
}

// Compare is the function under test, wrong.
func Compare(a, b string) int { return 0 }
