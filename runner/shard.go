package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one slice of a plan, for running a plan across several
// processes or machines: shard Index of Count (0 <= Index < Count). The
// plan's attempts are taken in Plan.Jobs order by unit, a unit being one
// task's attempt of one index under every arm (arms stay together, so that
// the attempts an arm comparison pairs run in one process, on one
// endpoint); shard I runs the units whose position is I modulo Count.
// Every attempt belongs to exactly one shard, the shards are within one
// unit of the same size, and each attempt keeps its seed. The zero Shard
// is the whole plan.
type Shard struct {
	Index, Count int
}

// ParseShard reads --shard I/N, with 0 <= I < N (the index of a
// Kubernetes Indexed Job, JOB_COMPLETION_INDEX, counts from 0; so does a
// Slurm array given as --array=0-(N-1)).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: expected I/N, e.g. 0/4 for the first of four shards", s)
	}
	sh := Shard{Index: idx, Count: count}
	if err := sh.Validate(); err != nil {
		return Shard{}, fmt.Errorf("%q: %w", s, err)
	}
	return sh, nil
}

// Validate checks that the shard is the whole plan or one of N >= 1.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: expected I/N with N >= 1 and 0 <= I < N (shards count from 0)", s.Index, s.Count)
	}
	return nil
}

// Whole reports whether the shard is the whole plan.
func (s Shard) Whole() bool { return s.Count <= 1 }

// Has reports whether the unit at position unit is the shard's.
func (s Shard) Has(unit int) bool { return s.Whole() || unit%s.Count == s.Index }

// InShard reports whether the job at position pos of Jobs is in the
// plan's shard (see Shard).
func (p *Plan) InShard(pos int) bool { return p.Shard.Has(pos / max(len(p.Arms), 1)) }

// String is "I/N", or "" for the whole plan (as runs.shard stores it).
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
