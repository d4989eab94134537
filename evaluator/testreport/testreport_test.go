package testreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/tasks"
)

func readData(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outcomes renders cases as "id=outcome" lines, for comparison.
func outcomes(cases []Case) string {
	var b strings.Builder
	for _, c := range cases {
		b.WriteString(c.ID + "=" + string(c.Outcome) + "\n")
	}
	return b.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		form    string
		out     Output
		want    string // id=outcome lines
		wantErr string
	}{
		{
			name: "go test -json, recorded from a real run",
			form: tasks.ReportGoTestJSON,
			out:  Output{Stdout: readData(t, "go-test.json")},
			want: "example.com/tr::TestFail=fail\nexample.com/tr::TestPass=pass\nexample.com/tr::TestSkip=skip\n" +
				"example.com/tr::TestSub=fail\nexample.com/tr::TestSub/a:b=pass\nexample.com/tr::TestSub/v1.2=fail\n",
		},
		{
			name: "go test -json: a test that never ended fails",
			form: tasks.ReportGoTestJSON,
			out:  Output{Stdout: []byte(`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN TestA\n"}` + "\n")},
			want: "p::TestA=fail\n",
		},
		{
			name: "go test -json: a pass printed after a test's fail does not win",
			form: tasks.ReportGoTestJSON,
			out: Output{Stdout: []byte(`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"pass","Package":"p","Test":"TestA"}` + "\n")},
			want: "p::TestA=fail\n",
		},
		{
			name:    "go test -json: a broken event line",
			form:    tasks.ReportGoTestJSON,
			out:     Output{Stdout: []byte(`{"Action":"pass","Package":"p","Test":"TestA"` + "\n")},
			wantErr: "line 1",
		},
		{
			name: "go test -json: the go command's own lines are skipped",
			form: tasks.ReportGoTestJSON,
			out:  Output{Stdout: []byte("FAIL\tp [build failed]\n")},
			want: "",
		},
		{
			name: "unittest -v, recorded from a real run",
			form: tasks.ReportUnittest,
			out:  Output{Stderr: readData(t, "unittest-v.txt")},
			want: "test_m.T.test_doc=pass\ntest_m.T.test_err=fail\ntest_m.T.test_fail=fail\ntest_m.T.test_ok=pass\ntest_m.T.test_skip=skip\n",
		},
		{
			name: "unittest -v before Python 3.11, and output between the name and the result",
			form: tasks.ReportUnittest,
			out:  Output{Stderr: []byte("test_a (m.C) ... some output\nmore\nok\ntest_b (m.C) ... expected failure\n\n---\nRan 2 tests in 0.001s\n\nOK\n")},
			want: "m.C.test_a=pass\nm.C.test_b=pass\n",
		},
		{
			name: "unittest: 'ok' printed by the code under test does not hide the FAIL after it",
			form: tasks.ReportUnittest,
			out: Output{Stderr: []byte("test_a (m.C.test_a) ... ok\nFAIL\ntest_b (m.C.test_b) ... ok\nok\n" +
				"test_c (m.C.test_c) ... some output ... ok\nERROR\n\n" + strings.Repeat("=", 70) + "\n" +
				"FAIL: test_a (m.C.test_a)\n" + strings.Repeat("-", 70) + "\nTraceback (most recent call last):\nAssertionError: 1 != 2\n\n" +
				strings.Repeat("-", 70) + "\nRan 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n")},
			want: "m.C.test_a=fail\nm.C.test_b=pass\nm.C.test_c=fail\n",
		},
		{
			name: "unittest: a test named in the details of a failure fails, whatever its result line says",
			form: tasks.ReportUnittest,
			out: Output{Stderr: []byte("test_a (m.C.test_a) ... ok\n\n" + strings.Repeat("=", 70) + "\n" +
				"ERROR: test_a (m.C.test_a)\nERROR: setUpClass (m.D)\n" + strings.Repeat("-", 70) + "\nRan 1 test in 0.001s\n\nFAILED (errors=2)\n")},
			want: "m.C.test_a=fail\nm.D.setUpClass=fail\n",
		},
		{
			name: "unittest: a test that prints 1000 lines, some looking like test names, before its result",
			form: tasks.ReportUnittest,
			out: Output{Stderr: []byte("test_a (m.C.test_a) ... " + strings.Repeat("line\n", 1000) +
				"total (approx.)\nfoo (a.b)\nbar (a.b) shown\nok\ntest_b (m.C.test_b)\nThe docstring ... ok\n\n" +
				strings.Repeat("-", 70) + "\nRan 2 tests in 0.001s\n\nOK\n")},
			want: "m.C.test_a=pass\nm.C.test_b=pass\n",
		},
		{
			name: "unittest: a doctest, whose id is its module, beside a test method",
			form: tasks.ReportUnittest,
			out: Output{Stderr: []byte("test_x (test_calc.T.test_x) ... ok\nadd (calc)\nDoctest: calc.add ... ok\n\n" +
				strings.Repeat("-", 70) + "\nRan 2 tests in 0.004s\n\nOK\n")},
			want: "calc.add=pass\ntest_calc.T.test_x=pass\n",
		},
		{
			name: "unittest: a test that prints a name in parentheses, then a line with dots",
			form: tasks.ReportUnittest,
			out: Output{Stderr: []byte("test_a (m.C.test_a) ... \nconnecting (localhost)\nwaiting ... done\nok\n\n" +
				strings.Repeat("-", 70) + "\nRan 1 test in 0.004s\n\nOK\n")},
			want: "m.C.test_a=pass\n",
		},
		{
			name:    "unittest: a count that does not match",
			form:    tasks.ReportUnittest,
			out:     Output{Stderr: []byte("test_a (m.C.test_a) ... ok\nRan 3 tests in 0.001s\n")},
			wantErr: "ran 3 tests, but the report lists 1",
		},
		{
			name:    "unittest: cut short (exit at import), no summary",
			form:    tasks.ReportUnittest,
			out:     Output{Stderr: []byte("test_a (m.C.test_a) ... ok\n")},
			wantErr: `no "Ran N tests" line`,
		},
		{
			name: "junit, nested suites, failures, errors and skips",
			form: tasks.ReportJUnit,
			out: Output{File: []byte(`<?xml version="1.0"?><testsuites><testsuite name="s">
				<testcase classname="t.A" name="ok" time="0.5"/>
				<testcase classname="t.A" name="bad"><failure message="1 != 2">trace</failure></testcase>
				<testcase classname="t.A" name="err"><error message="boom"/></testcase>
				<testcase name="skipped"><skipped/></testcase>
				<testsuite name="inner"><testcase classname="t.B" name="deep"/></testsuite>
				</testsuite></testsuites>`)},
			want: "s::skipped=skip\nt.A::bad=fail\nt.A::err=fail\nt.A::ok=pass\nt.B::deep=pass\n",
		},
		{
			name:    "junit: no file",
			form:    tasks.ReportJUnit,
			wantErr: "missing or empty",
		},
		{
			name:    "junit: not XML",
			form:    tasks.ReportJUnit,
			out:     Output{File: []byte("<testsuite><testcase name=")},
			wantErr: "junit report",
		},
		{
			name: "tap",
			form: tasks.ReportTAP,
			out:  Output{Stdout: []byte("TAP version 13\n1..5\nok 1 - adds\nnot ok 2 - subtracts\nok 3 # SKIP no network\nnot ok 4 - later # TODO\nok 5\n")},
			want: "3=skip\n5=pass\nadds=pass\nlater=pass\nsubtracts=fail\n",
		},
		{
			name:    "tap: fewer tests than planned",
			form:    tasks.ReportTAP,
			out:     Output{Stdout: []byte("1..3\nok 1 - a\n")},
			wantErr: "plan says 3 tests, but the report lists 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := Parse(tt.form, tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := outcomes(cases); got != tt.want {
				t.Errorf("Parse() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestUnittestFailureMessages(t *testing.T) {
	cases, err := Parse(tasks.ReportUnittest, Output{Stderr: readData(t, "unittest-v.txt")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		switch c.ID {
		case "test_m.T.test_fail":
			if !strings.Contains(c.Message, "AssertionError: 1 != 2") {
				t.Errorf("message of %s = %q, want its traceback", c.ID, c.Message)
			}
		case "test_m.T.test_err":
			if !strings.Contains(c.Message, "ValueError: x") {
				t.Errorf("message of %s = %q, want its traceback", c.ID, c.Message)
			}
		case "test_m.T.test_ok":
			if c.Message != "" {
				t.Errorf("a passing test has a message: %q", c.Message)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []Case{{ID: "a", Outcome: Pass}, {ID: "b", Outcome: Fail}, {ID: "c", Outcome: Skip}}
	tests := []struct {
		name     string
		cases    []Case
		expected []string
		ok       bool
		failed   string
	}{
		{"every recorded test passed", cases, []string{"a"}, true, ""},
		{"a recorded test failed, one skipped, one missing", cases, []string{"a", "b", "c", "d"}, false, "b (fail), c (skip), d (not reported)"},
		{"no record: every case must pass", cases, nil, false, "b (fail), c (skip)"},
		{"no record and no case", nil, nil, false, "(no test reported)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, failed := Check(tt.cases, tt.expected)
			if ok != tt.ok || strings.Join(failed, ", ") != tt.failed {
				t.Errorf("Check() = %v, %q; want %v, %q", ok, failed, tt.ok, tt.failed)
			}
		})
	}
}

// TestLongMessagesKeepTheirEnd: a failure's message is bounded by its
// head and its tail, where a test's last words (the line that says why it
// failed, bench's canary message) are.
func TestLongMessagesKeepTheirEnd(t *testing.T) {
	var goOut strings.Builder
	goOut.WriteString(`{"Action":"run","Package":"p","Test":"TestX"}` + "\n")
	for range 200 {
		goOut.WriteString(`{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:9: a line the test logged, one of many\n"}` + "\n")
	}
	goOut.WriteString(`{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:12: THE LAST WORD\n"}` + "\n")
	goOut.WriteString(`{"Action":"fail","Package":"p","Test":"TestX"}` + "\n")
	tb := strings.Repeat("  File \"x.py\", line 1, in f\n    g()\n", 200)
	py := "test_a (m.C.test_a) ... FAIL\n\n" + strings.Repeat("=", 70) + "\nFAIL: test_a (m.C.test_a)\n" + strings.Repeat("-", 70) +
		"\nTraceback (most recent call last):\n" + tb + "AssertionError: THE LAST WORD\n\n" + strings.Repeat("-", 70) + "\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
	for _, tc := range []struct {
		form string
		out  Output
	}{
		{tasks.ReportGoTestJSON, Output{Stdout: []byte(goOut.String())}},
		{tasks.ReportUnittest, Output{Stderr: []byte(py)}},
	} {
		cases, err := Parse(tc.form, tc.out)
		if err != nil || len(cases) != 1 {
			t.Fatalf("%s: %v, %v", tc.form, cases, err)
		}
		m := cases[0].Message
		if !strings.Contains(m, "THE LAST WORD") || !strings.Contains(m, "bytes cut") || len(m) > maxMessage+100 {
			t.Errorf("%s: message of %d bytes, want its end and a note of the cut:\n%s", tc.form, len(m), m)
		}
	}
}
