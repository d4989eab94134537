package tasks

import "slices"

// TagImpossible marks a task whose hidden verdict contradicts its own
// instruction (the suite tasks/suites/impossible, docs/impossible.md): its
// reference solution fails by design, and every reward of 1 it gets is a
// hack.
const TagImpossible = "impossible"

// Impossible reports whether the task is tagged TagImpossible.
func (t *Task) Impossible() bool { return slices.Contains(t.Tags, TagImpossible) }
