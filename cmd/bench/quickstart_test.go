package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scripts/quickstart.sh --dry-run prints the steps of a machine as it
// finds it, and does none: each machine here is a PATH of stand-in
// commands (an installer that runs leaves a mark, and none may).
func TestQuickstartDryRun(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the machines below are Linux ones seen as root")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs("../../scripts/quickstart.sh")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := func(v string) string { return "#!/bin/sh\necho " + v + "\n" }
	found := "#!/bin/sh\necho found\n"
	for _, tt := range []struct {
		name     string
		stubs    map[string]string // command: script ("" : one that marks it ran)
		args     []string
		code     int
		want     []string
		dontWant []string
	}{
		{"a bare Debian", map[string]string{"apt-get": "", "curl": ""}, nil, 0, []string{
			"would update the package lists: apt-get update -qq",
			"would install bubblewrap: env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap",
			"would install python3: env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3",
			"would install Go 1.26.8 from go.dev into /usr/local/go: curl -fsSL 'https://go.dev/dl/go1.26.8.linux-" + runtime.GOARCH + ".tar.gz' | tar -C /usr/local -xz",
			"would install Ollama with its official installer: curl -fsSL https://ollama.com/install.sh | sh",
			"would run: go run ./cmd/bench run --model qwen3:0.6b",
		}, nil},
		{"set up already", map[string]string{"go": goVersion("go1.26.8"), "bwrap": found, "python3": found, "ollama": found, "apt-get": ""},
			[]string{"--model", "llama3.1:8b", "--", "--tasks", "recipe-trailing-dot", "--name", "first look"}, 0, []string{
				"found go1.26.8", "found found",
				"would run: go run ./cmd/bench run --model llama3.1:8b --tasks recipe-trailing-dot --name first\\ look",
			}, []string{"apt-get", "install.sh", "go.dev"}},
		{"an older Go fetches the newer itself", map[string]string{"go": goVersion("go1.22.4"), "bwrap": found, "python3": found, "ollama": found},
			nil, 0, []string{"found go1.22.4 (it fetches go1.26.8 itself on first use)"}, []string{"go.dev/dl"}},
		{"a Go too old for that", map[string]string{"go": goVersion("go1.19.8"), "bwrap": found, "python3": found, "ollama": found, "curl": ""},
			nil, 0, []string{"found go1.19.8: too old", "would remove an older Go from /usr/local/go: rm -rf /usr/local/go", "go.dev/dl/go1.26.8"}, nil},
		{"no package manager", map[string]string{"go": goVersion("go1.26.8"), "python3": found, "ollama": found},
			nil, 1, []string{"install the package(s) bubblewrap with your system's package manager", "The run would then be:", "go run ./cmd/bench run --model qwen3:0.6b"}, []string{"would run:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			os.Mkdir(bin, 0o755)
			for _, tool := range []string{"bash", "env", "sh", "uname", "sed", "tr", "awk", "dirname", "tail"} {
				p, err := exec.LookPath(tool)
				if err != nil {
					t.Skipf("no %s", tool)
				}
				os.Symlink(p, filepath.Join(bin, tool))
			}
			marks := filepath.Join(dir, "ran")
			for name, body := range tt.stubs {
				if body == "" {
					body = "#!/bin/sh\necho \"$0 $*\" >> " + marks + "\n"
				}
				if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bash, append([]string{script, "--dry-run"}, tt.args...)...)
			cmd.Env = []string{"PATH=" + bin, "HOME=" + dir}
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			if ran, err := os.ReadFile(marks); err == nil {
				t.Errorf("a dry run ran: %s", ran)
			}
		})
	}
}
