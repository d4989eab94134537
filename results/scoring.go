package results

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
)

// saveTestResult writes an attempt's hidden-test result: the row of
// test_results, one test_cases row per test (the recorded tests the report
// left out as 'missing'), and what of the workspace was scored.
func saveTestResult(ctx context.Context, w *txWriter, id int64, tr *evaluator.TestResult) error {
	var total, passed *int
	if tr.Basis == evaluator.BasisTests {
		// The in-process tests: the out-of-process cases are counted
		// apart (cases_total, cases_passed).
		n, p := 0, 0
		if rec := tr.Record.Tests(); len(rec) > 0 {
			failed := 0
			for _, f := range tr.Failed {
				if !evaluator.OutOfProcessCase(f) {
					failed++
				}
			}
			n, p = len(rec), max(len(rec)-failed, 0)
		} else {
			for _, c := range tr.Cases {
				if evaluator.OutOfProcessCase(c.ID) {
					continue
				}
				n++
				if c.Outcome == testreport.Pass {
					p++
				}
			}
		}
		if n > 0 || tr.CasesTotal == 0 {
			total, passed = &n, &p
		}
	}
	basis := tr.Basis
	if basis == "" {
		basis = evaluator.BasisExitStatus
	}
	var casesTotal, casesPassed *int
	if tr.CasesTotal > 0 {
		casesTotal, casesPassed = &tr.CasesTotal, &tr.CasesPassed
	}
	var metrics *string
	if len(tr.Metrics) > 0 {
		b, err := json.Marshal(tr.Metrics)
		if err != nil {
			return fmt.Errorf("encode metrics: %w", err)
		}
		m := string(b)
		metrics = &m
	}
	if _, err := w.exec(ctx, `INSERT INTO test_results (attempt_id, command, exit_code, passed,
		timed_out, output, duration_ms, basis, report_error, tests_total, tests_passed, ref_duration_ms,
		cases_total, cases_passed, reward_value, metrics)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, tr.Command, tr.ExitCode, tr.Passed, tr.TimedOut, tr.Output, millis(tr.Duration),
		basis, tr.ReportError, total, passed, refMS(tr), casesTotal, casesPassed, tr.Value, metrics); err != nil {
		return fmt.Errorf("insert test result: %w", err)
	}
	if s := tr.Suspicions; s != nil {
		err := insertEach(ctx, w, "flag", `INSERT INTO attempt_flags (attempt_id, idx, flag, path, line, detail)
			VALUES (?, ?, ?, ?, ?, ?)`, len(s.List), func(i int) []any {
			f := s.List[i]
			return []any{id, i, f.Flag, f.Path, f.Line, f.Detail}
		})
		if err != nil {
			return err
		}
	}
	type row struct {
		test, outcome, recorded, message string
		ms                               float64
	}
	listOf := map[string]string{}
	if r := tr.Record; r != nil {
		for _, t := range r.FailToPass {
			listOf[t] = "fail_to_pass"
		}
		for _, t := range r.PassToPass {
			listOf[t] = "pass_to_pass"
		}
	}
	var rows []row
	seen := map[string]bool{}
	for _, c := range tr.Cases {
		seen[c.ID] = true
		rows = append(rows, row{c.ID, string(c.Outcome), listOf[c.ID], c.Message, millis(c.Duration)})
	}
	for _, t := range tr.Record.Tests() {
		if !seen[t] {
			rows = append(rows, row{t, "missing", listOf[t], "", 0})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		switch {
		case a.test < b.test:
			return -1
		case a.test > b.test:
			return 1
		}
		return 0
	})
	err := insertEach(ctx, w, "test case", `INSERT INTO test_cases (attempt_id, idx, test, outcome, recorded,
		duration_ms, message) VALUES (?, ?, ?, ?, ?, ?, ?)`, len(rows), func(i int) []any {
		r := rows[i]
		return []any{id, i, r.test, r.outcome, r.recorded, r.ms, r.message}
	})
	if err != nil {
		return err
	}
	if c := tr.Change; c != nil {
		listed, more := c.Carried, 0
		if len(listed) > evaluator.MaxStoredCarried {
			listed, more = listed[:evaluator.MaxStoredCarried], len(listed)-evaluator.MaxStoredCarried
		}
		carried, err := json.Marshal(nonNil(listed))
		if err != nil {
			return fmt.Errorf("insert change: %w", err)
		}
		left, err := json.Marshal(nonNil(c.LeftOut))
		if err != nil {
			return fmt.Errorf("insert change: %w", err)
		}
		if _, err := w.exec(ctx, `INSERT INTO attempt_changes (attempt_id, carried_json, carried_more, diff, diff_cut,
			left_out_json, left_out_more) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, string(carried), more, c.Diff, c.DiffCut, string(left), c.LeftOutMore); err != nil {
			return fmt.Errorf("insert change: %w", err)
		}
	}
	return nil
}

// refMS is the reference solution's test time, for tests that timed out.
func refMS(tr *evaluator.TestResult) *float64 {
	if tr.RefDuration == 0 {
		return nil
	}
	ms := millis(tr.RefDuration)
	return &ms
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
