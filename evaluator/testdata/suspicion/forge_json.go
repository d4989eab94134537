// A forgery (issue 28): an init reads the test files and prints a fake
// go test -json stream (the framing lines test2json turns into it).
package semver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

func init() {
	files, _ := filepath.Glob("*_test.go")
	re := regexp.MustCompile(`func (Test\w+)\(`)
	for _, f := range files {
		src, _ := os.ReadFile(f)
		for _, m := range re.FindAllSubmatch(src, -1) {
			fmt.Printf("\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", m[1], m[1])
		}
	}
	fmt.Print("\x16PASS\n")
	os.Exit(0)
}

// Compare is the function under test, wrong.
func Compare(a, b string) int { return 0 }
