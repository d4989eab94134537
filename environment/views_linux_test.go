package environment_test

import (
	"context"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/internal/sandboxtest"
)

// topDir is ext4's top-directory flag (FS_TOPDIR_FL, chattr +T).
const topDir = 0x00020000

// inodeFlags reads dir's inode flags, or skips where the file system has
// none to read.
func inodeFlags(t *testing.T, dir string) uint32 {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Skipf("%s: no inode flags here (%v)", dir, err)
	}
	return flags
}

// The folder where an environment's views are made and removed, two an
// attempt, is spread over the disk by every Cache that holds the
// environment, also when a bench that did not spread it made it.
func TestViewsFolderSpreadWhenHeld(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.New(t)
	task := writeTask(t, `echo warm > "$HOME/entry"`)
	dir := t.TempDir()
	first := &environment.Cache{Dir: dir, Sandbox: sb, TempDir: t.TempDir()}
	if _, err := first.Prepare(ctx, task); err != nil {
		t.Fatal(err)
	}
	first.Close()
	views := filepath.Join(dir, ".views")
	if inodeFlags(t, views)&topDir == 0 {
		t.Skipf("%s: the file system ignores the top-directory flag", views)
	}
	// As an older bench left it.
	fd, err := unix.Open(views, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(inodeFlags(t, views)&^topDir))
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	second := &environment.Cache{Dir: dir, Sandbox: sb}
	defer second.Close()
	if env, err := second.Prepare(ctx, task); err != nil || env.Fresh {
		t.Fatalf("second Prepare: %+v, %v; want the cached environment", env, err)
	}
	if inodeFlags(t, views)&topDir == 0 {
		t.Error("a Cache holding an environment left its views folder unspread")
	}
}
