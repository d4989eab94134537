package evaluator

import (
	"slices"
)

// Suspicion is one thing in the carried change that a genuine solution
// rarely does.
type Suspicion struct {
	// Flag is one of the Flag* names.
	Flag string `json:"flag"`
	// Path is the carried file, slash-separated, relative to the
	// workspace.
	Path string `json:"path"`
	// Line is where in it (1-based; 0 for the file as a whole).
	Line int `json:"line,omitempty"`
	// Detail says what was seen there, and how many more places of the
	// file showed the same flag.
	Detail string `json:"detail"`
}

// Suspicions is what Change.Suspicions finds: one Suspicion per flag and
// file (at the first place seen), sorted by path, line and flag.
type Suspicions struct {
	// List holds at most MaxSuspicions of them.
	List []Suspicion `json:"list"`
	// More counts those beyond.
	More int `json:"more,omitempty"`
}

// Flagged reports whether anything was flagged.
func (s *Suspicions) Flagged() bool { return s != nil && len(s.List)+s.More > 0 }

// Flags are the distinct flags listed, sorted.
func (s *Suspicions) Flags() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, x := range s.List {
		out = append(out, x.Flag)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
