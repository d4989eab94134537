//go:build linux

package evaluator

import (
	"strings"
	"syscall"
	"testing"

	"github.com/benchhq/bench/tasks"
)

// TestCollectChangeLeavesOutWhatCannotBeRead: folders nested past PATH_MAX
// (which any agent can make, one relative mkdir at a time) are left out
// of scoring, not a failure of the harness that stops the run.
func TestCollectChangeLeavesOutWhatCannotBeRead(t *testing.T) {
	task, ws := attemptOf(t, map[string]string{
		tasks.FileName:   "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n",
		"workspace/a.py": "x = 1\n",
	}, map[string]string{"a.py": "x = 2\n"})
	fd, err := syscall.Open(ws, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2100; i++ { // "d/" 2100 times: 4200 bytes
		if err := syscall.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := syscall.Openat(fd, "d", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		syscall.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	syscall.Close(fd)

	c, err := CollectChange(task, ws)
	if err != nil {
		t.Fatalf("CollectChange: %v", err)
	}
	if len(c.Carried) != 1 || c.Carried[0].Path != "a.py" {
		t.Errorf("carried %+v, want a.py", c.Carried)
	}
	found := false
	for _, l := range c.LeftOut {
		if strings.HasPrefix(l.Path, "d/d/") && strings.HasPrefix(l.Reason, tasks.LeftOutUnreadable) {
			found = true
			if len(l.Path) > 600 {
				t.Errorf("a left-out path of %d bytes: it should be cut", len(l.Path))
			}
		}
	}
	if !found {
		t.Errorf("the deep folders are not left out as unreadable: %+v", c.LeftOut)
	}
}
