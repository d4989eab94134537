//go:build !linux

package agent

import (
	"context"
	"errors"
	"io/fs"
)

// DetectSandbox reports that no sandbox is available: bubblewrap needs
// Linux. Commands run in the confined mode.
func DetectSandbox(context.Context) (*Sandbox, error) {
	return nil, errors.New("sandbox: bubblewrap needs Linux; commands run confined to the workspace folder only")
}

func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
