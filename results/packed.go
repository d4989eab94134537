package results

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/benchhq/bench/evaluator"
)

// A stopped run's attempts, as AttemptMetrics gives them, are also kept
// packed with its summary (run_summaries.attempts_packed): bench report
// computes the per-task rows of a run's report from them, reading one
// value instead of every attempt's row of the index. SQLite's rows cost
// most of a report (a row's 21 columns, each read under the driver's
// lock); the packed form costs a few milliseconds per 100,000 attempts.
//
// The format (docs/schema.md): the magic packedMagic, then unsigned
// varints (u) and signed varints (s):
//
//	u arms, then each arm's name: u length, bytes
//	u tasks, then each task's id
//	u strings, then each string (the attempts' statuses, stop reasons,
//	  advantage methods, verdicts and flags, each once)
//	u attempts, then each attempt:
//	  s id minus the previous attempt's id (the first's: minus 0)
//	  u arm, u task (indexes in the lists above), u index
//	  u status, u stop reason, u advantage method, u verdict, u flags
//	    (indexes in the strings; flags joined by commas)
//	  u reward + 1 (0: none)
//	  u 1 and the advantage's 8 bytes (IEEE 754, little-endian), or u 0
//	  u turns, u tool calls, u prompt tokens, u completion tokens
//	  s wall, model, tools, tests, harness time, in nanoseconds
//	  u denials, u truncated turns
const packedMagic = "bench-attempts/1\n"

// packAttempts packs a run's attempts.
func packAttempts(run *Run, attempts []AttemptMetrics) ([]byte, error) {
	arms, tasks := map[string]uint64{}, map[string]uint64{}
	b := []byte(packedMagic)
	b = binary.AppendUvarint(b, uint64(len(run.Arms)))
	for i, a := range run.Arms {
		arms[a.Name] = uint64(i)
		b = appendPacked(b, a.Name)
	}
	b = binary.AppendUvarint(b, uint64(len(run.Tasks)))
	for i, t := range run.Tasks {
		tasks[t.ID] = uint64(i)
		b = appendPacked(b, t.ID)
	}
	strs := map[string]uint64{}
	var table []string
	str := func(s string) uint64 {
		i, ok := strs[s]
		if !ok {
			i = uint64(len(table))
			strs[s] = i
			table = append(table, s)
		}
		return i
	}
	var body []byte
	prev := int64(0)
	for _, a := range attempts {
		arm, ok := arms[a.Key.Arm]
		task, ok2 := tasks[a.Key.Task]
		if !ok || !ok2 || a.Key.Index < 0 {
			return nil, fmt.Errorf("attempt %d (%s): its arm or task is not in run %q", a.ID, a.Key, run.ID)
		}
		body = binary.AppendVarint(body, a.ID-prev)
		prev = a.ID
		body = binary.AppendUvarint(body, arm)
		body = binary.AppendUvarint(body, task)
		body = binary.AppendUvarint(body, uint64(a.Key.Index))
		for _, s := range []string{string(a.Status), a.StopReason, a.AdvantageMethod, string(a.Verdict), strings.Join(a.Flags, ",")} {
			body = binary.AppendUvarint(body, str(s))
		}
		reward := uint64(0)
		if a.Reward != nil {
			if *a.Reward < 0 {
				return nil, fmt.Errorf("attempt %d: reward %d", a.ID, *a.Reward)
			}
			reward = uint64(*a.Reward) + 1
		}
		body = binary.AppendUvarint(body, reward)
		if a.Advantage != nil {
			body = binary.AppendUvarint(body, 1)
			body = binary.LittleEndian.AppendUint64(body, math.Float64bits(*a.Advantage))
		} else {
			body = binary.AppendUvarint(body, 0)
		}
		for _, n := range []int{a.Turns, a.ToolCalls, a.PromptTokens, a.CompletionTokens} {
			if n < 0 {
				return nil, fmt.Errorf("attempt %d: a negative count %d", a.ID, n)
			}
			body = binary.AppendUvarint(body, uint64(n))
		}
		for _, d := range []time.Duration{a.Wall, a.Times.Model, a.Times.Tools, a.Times.Tests, a.Times.Harness} {
			body = binary.AppendVarint(body, int64(d))
		}
		for _, n := range []int{a.Denials, a.TruncatedTurns} {
			if n < 0 {
				return nil, fmt.Errorf("attempt %d: a negative count %d", a.ID, n)
			}
			body = binary.AppendUvarint(body, uint64(n))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(table)))
	for _, s := range table {
		b = appendPacked(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(attempts)))
	return append(b, body...), nil
}

func appendPacked(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errPacked is wrapped by every error of unpackAttempts.
var errPacked = errors.New("column run_summaries.attempts_packed: not a packed list of attempts")

// packReader reads packed values, keeping the first error.
type packReader struct {
	b   []byte
	err error
}

func (r *packReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: cut short", errPacked)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *packReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: cut short", errPacked)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of items, each at least min bytes long.
func (r *packReader) count(minBytes int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/max(minBytes, 1)+1) {
		r.err = fmt.Errorf("%w: %d items in %d bytes", errPacked, n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *packReader) strings() []string {
	out := make([]string, r.count(1))
	for i := range out {
		n := r.uvarint()
		if r.err == nil && n > uint64(len(r.b)) {
			r.err = fmt.Errorf("%w: a string of %d bytes in %d", errPacked, n, len(r.b))
		}
		if r.err != nil {
			return nil
		}
		out[i], r.b = string(r.b[:n]), r.b[n:]
	}
	return out
}

// index reads an index in a list of n.
func (r *packReader) index(n int) int {
	i := r.uvarint()
	if r.err == nil && i >= uint64(n) {
		r.err = fmt.Errorf("%w: index %d in a list of %d", errPacked, i, n)
		return 0
	}
	return int(i)
}

// unpackAttempts reads packed attempts, and the names of the run's arms
// and tasks they were packed with.
func unpackAttempts(b []byte) (arms, tasks []string, out []AttemptMetrics, err error) {
	if !strings.HasPrefix(string(b[:min(len(b), len(packedMagic))]), packedMagic) {
		return nil, nil, nil, fmt.Errorf("%w: it does not start with %q", errPacked, packedMagic)
	}
	r := &packReader{b: b[len(packedMagic):]}
	arms, tasks = r.strings(), r.strings()
	table := r.strings()
	flags := make([][]string, len(table))
	for i, s := range table {
		flags[i] = splitFlags(s)
	}
	n := r.count(20)
	out = make([]AttemptMetrics, n)
	// Rewards and advantages live in two arrays rather than in 200,000
	// small objects, as AttemptMetrics does it.
	rewards := make([]int, n)
	advs := make([]float64, n)
	id := int64(0)
	for i := range out {
		a := &out[i]
		id += r.varint()
		a.ID = id
		a.Key.Arm = arms[r.index(len(arms))]
		a.Key.Task = tasks[r.index(len(tasks))]
		a.Key.Index = int(r.uvarint())
		a.Status = AttemptStatus(table[r.index(len(table))])
		a.StopReason = table[r.index(len(table))]
		a.AdvantageMethod = table[r.index(len(table))]
		a.Verdict = evaluator.Verdict(table[r.index(len(table))])
		a.Flags = flags[r.index(len(table))]
		if v := r.uvarint(); v > 0 {
			rewards[i] = int(v - 1)
			a.Reward = &rewards[i]
		}
		if r.uvarint() == 1 {
			if r.err == nil && len(r.b) < 8 {
				r.err = fmt.Errorf("%w: cut short", errPacked)
			}
			if r.err != nil {
				break
			}
			advs[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
			r.b = r.b[8:]
			a.Advantage = &advs[i]
		}
		a.Turns, a.ToolCalls = int(r.uvarint()), int(r.uvarint())
		a.PromptTokens, a.CompletionTokens = int(r.uvarint()), int(r.uvarint())
		a.Wall = time.Duration(r.varint())
		a.Times = Times{Model: time.Duration(r.varint()), Tools: time.Duration(r.varint()),
			Tests: time.Duration(r.varint()), Harness: time.Duration(r.varint())}
		a.Denials, a.TruncatedTurns = int(r.uvarint()), int(r.uvarint())
		if r.err != nil {
			break
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d bytes after the last attempt", errPacked, len(r.b))
	}
	if r.err != nil {
		return nil, nil, nil, r.err
	}
	return arms, tasks, out, nil
}
