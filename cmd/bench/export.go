package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

const exportUsage = `Usage: bench export [flags]

Writes the finished attempts of a run (default: the latest) as JSONL, one
attempt per line: the messages exactly as sent to the model and the tools
offered (the chat "messages" + "tools" shape that TRL and verifiers read),
with the reward, the group-relative advantage, the group id, the run, arm
and task ids, token counts, model and options. Attempts ended by an
infrastructure failure are never exported. See docs/export.md.

Flags:
`

// listFlag is a flag that may be repeated and holds comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return errors.New("empty name")
		}
		if !slices.Contains(*l, v) {
			*l = append(*l, v)
		}
	}
	return nil
}

// floatFlag is a float flag with no default of its own (-h prints none),
// that knows whether it was set: v is nil until it is, or points where the
// value goes.
type floatFlag struct {
	v   *float64
	set bool
}

func (f *floatFlag) String() string {
	if f == nil || f.v == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

// Set parses a number.
func (f *floatFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a number")
	}
	if f.v == nil {
		f.v = new(float64)
	}
	*f.v, f.set = v, true
	return nil
}

// Get implements flag.Getter: the flag holds a number.
func (f *floatFlag) Get() any {
	if f.v == nil {
		return 0.0
	}
	return *f.v
}

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stderr, exportUsage)
	db := fs.String("db", "bench.db", "SQLite file of results")
	var runs, arms listFlag
	var minReward, maxReward floatFlag
	fs.Var(&runs, "run", "run `ID` to export (repeatable or comma-separated; default the latest run)")
	fs.Var(&arms, "arm", "export only this `ARM` (repeatable or comma-separated; default every arm)")
	onlySignal := fs.Bool("only-signal", false, "only groups whose rewards differ (zero-variance groups have advantage 0)")
	fs.Var(&minReward, "min-reward", "only attempts with reward >= `R`")
	fs.Var(&maxReward, "max-reward", "only attempts with reward <= `R`")
	sft := fs.Bool("sft", false, "supervised fine-tuning data: only attempts with reward 1")
	method := fs.String("method", "", "recompute advantages with this method: grpo, grpo-batch, drgrpo, rloo (default: as stored)")
	out := fs.String("out", "", "write to `FILE` (replaced whole, only on success) instead of standard output")
	format := fs.String("format", "jsonl", "`FORM` of each line: jsonl (bench's chat lines) or atif (one Agent Trajectory Interchange Format trajectory per attempt, as Harbor writes them)")
	tokens := fs.String("tokens", "", "exact-token form instead of messages: `FORMAT` trl (prompt_ids, completion_ids, logprobs, env_mask for TRL's rollout_func) or verifiers (per turn); attempts without exact ids are left out and counted (runs made with bench run --tokens)")
	digest := fs.String("model-digest", "", "with --tokens: only attempts whose every turn was served by these weights (turns.model_digest)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	exportTo := exportJSONL
	switch *format {
	case "jsonl":
	case "atif":
		exportTo = exportATIF
	default:
		return usagef("export: --format: expected jsonl or atif, got %q", *format)
	}
	var tokenForm results.TokenFormat
	if *tokens != "" {
		var err error
		if tokenForm, err = results.ParseTokenFormat(*tokens); err != nil {
			return usagef("export: --tokens: %v", err)
		}
		if *format != "jsonl" {
			return usagef("export: --tokens and --format %s: the exact-token form is a form of its own", *format)
		}
	} else if *digest != "" {
		return usagef("export: --model-digest needs --tokens (the messages form has no per-turn digests)")
	}
	if fs.NArg() > 0 {
		return usagef("export: unexpected argument %q (name runs with --run)", fs.Arg(0))
	}
	opts := results.ExportOptions{Runs: runs, Arms: arms, OnlySignal: *onlySignal, SFT: *sft,
		MinReward: minReward.v, MaxReward: maxReward.v}
	if *method != "" {
		m, err := evaluator.ParseMethod(*method)
		if err != nil {
			return usagef("export: --method: %v", err)
		}
		opts.Method = m
	}
	store, err := openResults(ctx, "export", *db)
	if err != nil {
		return err
	}
	defer store.Close()

	var stats results.ExportStats
	var tstats results.TokenExportStats
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		var err error
		if tokenForm != "" {
			tstats, err = store.ExportTokens(ctx, bw, results.TokenExportOptions{ExportOptions: opts, Format: tokenForm, ModelDigest: *digest})
			stats = tstats.ExportStats
		} else {
			stats, err = exportTo(ctx, store, bw, opts)
		}
		if err != nil {
			return err
		}
		return bw.Flush()
	}
	dest := "standard output"
	if *out == "" {
		err = write(stdout)
	} else {
		dest = *out
		err = writeFileAtomic(*out, write)
	}
	if err != nil {
		return exportError(err, *db)
	}
	runWord := "run"
	if len(stats.Runs) > 1 {
		runWord = "runs"
	}
	fmt.Fprintf(stderr, "exported %s from %s of %s %s to %s", count(stats.Lines, "attempt"), count(stats.Groups, "group"),
		runWord, strings.Join(stats.Runs, ", "), dest)
	if len(stats.Methods) > 0 {
		fmt.Fprintf(stderr, " (advantages: %s)", strings.Join(stats.Methods, ", "))
	}
	fmt.Fprintln(stderr)
	if len(stats.Computed) > 0 && opts.Method == "" {
		fmt.Fprintf(stderr, "advantages computed now for run %s: the store holds none or only some (run not finished)\n",
			strings.Join(stats.Computed, ", "))
	}
	if stats.Unscored > 0 {
		fmt.Fprintf(stderr, "%d attempts that did not finish (infrastructure errors, interruptions) were left out\n", stats.Unscored)
	}
	if n := tstats.LeftOutTotal(); n > 0 {
		fmt.Fprintf(stderr, "%s without exact token data left out (never re-tokenised):\n", count(n, "attempt"))
		for _, why := range slices.Sorted(maps.Keys(tstats.LeftOut)) {
			fmt.Fprintf(stderr, "  %d: %s\n", tstats.LeftOut[why], why)
		}
	}
	if tokenForm != "" && stats.Lines > 0 {
		fmt.Fprintf(stderr, "%d token ids, %d of them sampled by the model (mask 1)\n", tstats.Tokens, tstats.Sampled)
	}
	if stats.Lines == 0 {
		fmt.Fprintln(stderr, "warning: no attempt matched")
	}
	return nil
}

// The export forms (--format).
func exportJSONL(ctx context.Context, s *results.Store, w io.Writer, opts results.ExportOptions) (results.ExportStats, error) {
	return s.Export(ctx, w, opts)
}

func exportATIF(ctx context.Context, s *results.Store, w io.Writer, opts results.ExportOptions) (results.ExportStats, error) {
	return s.ExportATIF(ctx, w, opts)
}

// exportError turns the errors of options that do not fit the store (an
// unknown run or arm, an empty reward range) into usage errors naming the
// flag; others are returned as they are.
func exportError(err error, db string) error {
	var noRun *results.NoRunError
	var noArm *results.NoArmError
	var badRange *results.RewardRangeError
	switch {
	case errors.As(err, &noRun):
		return usagef("export: --run %s: no such run in %s", noRun.ID, db)
	case errors.As(err, &noArm):
		return usagef("export: --arm %s: no such arm in the run (arms: %s)", noArm.Arm, strings.Join(noArm.Arms, ", "))
	case errors.As(err, &badRange):
		return usagef("export: --min-reward %v is above --max-reward %v", badRange.Min, badRange.Max)
	}
	return err
}

// writeFileAtomic writes path through a temporary file in the same
// folder, renamed over path only when write succeeded: a failed export
// never leaves a half-written file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written
		// to, never replaced by a file.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("export: --out %s: %w", path, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("export: --out %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("export: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("export: write %s: %w", path, err)
	}
	return nil
}

// count writes n and the word, with an s unless n is 1.
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
