package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Suite is a folder of tasks.
type Suite struct {
	// Name is the suite folder's name.
	Name string
	// Dir is the suite folder's absolute path.
	Dir string
	// Tasks are the suite's tasks, sorted by ID.
	Tasks []*Task
}

// LoadSuite loads every task of the suite in dir: each subfolder that holds
// a task.toml. dir may also be a single task folder, which makes a suite of
// one. All tasks are validated; the first bad one is the error.
func LoadSuite(dir string) (*Suite, error) { return loadSuite(dir, true) }

// LoadSuiteToRecord loads a suite as LoadSuite does, except that a task
// whose test record is stale loads without it (Record nil): what
// `bench validate --record` needs to write the record again.
func LoadSuiteToRecord(dir string) (*Suite, error) { return loadSuite(dir, false) }

func loadSuite(dir string, checkRecord bool) (*Suite, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FieldError{File: dir, Msg: "no such folder (expected a suite: a folder of task folders, or a task folder)"}
		}
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, &FieldError{File: dir, Msg: "not a folder (expected a suite: a folder of task folders, or a task folder)"}
	}
	if _, err := os.Stat(filepath.Join(abs, FileName)); err == nil {
		t, err := load(abs, checkRecord)
		if err != nil {
			return nil, err
		}
		return &Suite{Name: t.ID, Dir: filepath.Dir(abs), Tasks: []*Task{t}}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	s := &Suite{Name: filepath.Base(abs), Dir: abs}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(abs, e.Name())
		if _, err := os.Stat(filepath.Join(sub, FileName)); err != nil {
			continue
		}
		t, err := load(sub, checkRecord)
		if err != nil {
			return nil, err
		}
		s.Tasks = append(s.Tasks, t)
	}
	if len(s.Tasks) == 0 {
		return nil, &FieldError{File: dir, Msg: fmt.Sprintf("no task folders in it (subfolders with a %s): not a suite", FileName)}
	}
	sort.Slice(s.Tasks, func(i, j int) bool { return s.Tasks[i].ID < s.Tasks[j].ID })
	return s, nil
}

// Task returns the task of an ID.
func (s *Suite) Task(id string) (*Task, bool) {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return nil, false
}
