package tasks

import (
	"fmt"
	"path/filepath"
)

// NewForeign makes a Task of a task folder written in another format (the
// harbor package's Harbor folders), from the fields its reader converted:
// it sets the task's ID (the folder's name), Dir and Hash (of every file
// of the folder) as Load does, and checks the limits. The fields of t that
// name the folder's own files (ID, Dir, Hash, Record) are ignored.
func NewForeign(dir string, t Task) (*Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	if field, msg := t.Limits.Check(); field != "" {
		return nil, &FieldError{File: abs, Field: "limits." + field, Msg: msg}
	}
	t.ID = filepath.Base(abs)
	t.Dir = abs
	t.Record = nil
	t.snaps = &snapshots{}
	if t.Hash, err = hashDir(abs, RecordFile); err != nil {
		return nil, fmt.Errorf("load task %s: hash: %w", dir, err)
	}
	return &t, nil
}
