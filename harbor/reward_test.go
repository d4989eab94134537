package harbor

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
)

const ctrfOK = `{"results": {"tool": {"name": "pytest"}, "summary": {"tests": 3},
 "tests": [
  {"name": "test_a", "status": "passed", "duration": 12},
  {"name": "test_b", "status": "failed", "duration": 3, "message": "assert 1 == 2"},
  {"name": "test_c", "status": "skipped"},
  {"name": "test_a", "status": "passed"}
 ]}}`

func TestReadVerdict(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		passed  bool
		value   float64
		metrics map[string]float64
		source  string
		reason  string // in Reason; "" for none
		cases   int
	}{
		{name: "txt one", files: map[string]string{RewardText: "1\n"}, passed: true, value: 1, source: RewardText},
		{name: "txt zero", files: map[string]string{RewardText: "0"}, value: 0, source: RewardText},
		{name: "txt fraction", files: map[string]string{RewardText: " 0.75 "}, value: 0.75, source: RewardText},
		{name: "json metrics", files: map[string]string{RewardJSON: `{"reward": 1, "lines_ok": 1, "style": 0.5, "note": "x"}`},
			passed: true, value: 1, metrics: map[string]float64{"lines_ok": 1, "style": 0.5}, source: RewardJSON},
		{name: "json single key", files: map[string]string{RewardJSON: `{"accuracy": 0.5}`}, value: 0.5, source: RewardJSON},
		{name: "txt decides over json", files: map[string]string{RewardText: "0", RewardJSON: `{"reward": 1, "m": 2}`},
			value: 0, metrics: map[string]float64{"m": 2}, source: RewardText},
		{name: "with ctrf", files: map[string]string{RewardText: "1", CTRFFile: ctrfOK}, passed: true, value: 1, source: RewardText, cases: 3},
		{name: "no reward", files: map[string]string{}, reason: "the verifier wrote no reward"},
		{name: "txt not a number", files: map[string]string{RewardText: "PASSED"}, reason: `reward.txt: expected one number, got "PASSED"`},
		{name: "txt two numbers", files: map[string]string{RewardText: "1 1"}, reason: "expected one number"},
		{name: "txt NaN", files: map[string]string{RewardText: "NaN"}, reason: "expected one number"},
		{name: "txt empty", files: map[string]string{RewardText: ""}, reason: "empty"},
		{name: "json not an object", files: map[string]string{RewardJSON: `[1]`}, reason: "expected a JSON object"},
		{name: "json reward a string", files: map[string]string{RewardJSON: `{"reward": "1"}`}, reason: "key reward: expected a number"},
		{name: "json ambiguous", files: map[string]string{RewardJSON: `{"a": 1, "b": 1}`}, reason: `no key "reward" among the metrics a, b`},
		{name: "json no number", files: map[string]string{RewardJSON: `{}`}, reason: "no numeric key"},
		{name: "ctrf broken", files: map[string]string{RewardText: "1", CTRFFile: "{not json"}, reason: "ctrf.json: not a CTRF report"},
		{name: "ctrf no tests", files: map[string]string{RewardText: "1", CTRFFile: `{"results": {}}`}, reason: "no results.tests"},
		{name: "ctrf bad status", files: map[string]string{RewardText: "1", CTRFFile: `{"results": {"tests": [{"name": "t", "status": "ok"}]}}`}, reason: `status "ok"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, s := range c.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v := ReadVerdict(dir)
			if v.Kind != evaluator.VerdictInProcess {
				t.Errorf("kind %q", v.Kind)
			}
			if c.reason != "" {
				if !strings.Contains(v.Reason, c.reason) || v.Passed || v.Value != 0 || v.Reward() != 0 {
					t.Errorf("got %+v, want a 0 with a reason holding %q", v, c.reason)
				}
				return
			}
			if v.Reason != "" || v.Passed != c.passed || v.Value != c.value || v.Source != c.source || !reflect.DeepEqual(v.Metrics, c.metrics) || len(v.Cases) != c.cases {
				t.Errorf("got %+v", v)
			}
		})
	}
}

func TestReadVerdictRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "one")
	os.WriteFile(secret, []byte("1"), 0o644)
	if err := os.Symlink(secret, filepath.Join(dir, RewardText)); err != nil {
		t.Fatal(err)
	}
	if v := ReadVerdict(dir); v.Passed || !strings.Contains(v.Reason, "not a regular file") {
		t.Errorf("a symbolic link was followed: %+v", v)
	}
	dir = t.TempDir()
	f, _ := os.Create(filepath.Join(dir, RewardText))
	f.Truncate(maxRewardFile + 1)
	f.Close()
	if v := ReadVerdict(dir); v.Passed || !strings.Contains(v.Reason, "larger than") {
		t.Errorf("a huge reward file was read: %+v", v)
	}
}

func TestParseCTRF(t *testing.T) {
	got, err := ParseCTRF([]byte(ctrfOK))
	if err != nil {
		t.Fatal(err)
	}
	want := []testreport.Case{
		{ID: "test_a", Outcome: testreport.Pass, Duration: 12e6},
		{ID: "test_b", Outcome: testreport.Fail, Duration: 3e6, Message: "assert 1 == 2"},
		{ID: "test_c", Outcome: testreport.Skip},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// A test reported twice keeps its worse outcome.
	got, err = ParseCTRF([]byte(`{"results": {"tests": [{"name": "t", "status": "failed"}, {"name": "t", "status": "passed"}]}}`))
	if err != nil || len(got) != 1 || got[0].Outcome != testreport.Fail {
		t.Errorf("got %+v, %v", got, err)
	}
}
