package harbor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
)

// Where Harbor's verifier writes, inside the environment.
const (
	// TestsPath is where tests/ is copied once the agent stops.
	TestsPath = "/tests"
	// LogsPath is the verifier's output folder.
	LogsPath = "/logs/verifier"
	// RewardText is the reward as one number.
	RewardText = "reward.txt"
	// RewardJSON is the reward as an object of numeric metrics, "reward"
	// the main one.
	RewardJSON = "reward.json"
	// CTRFFile is the per-test report (pytest-json-ctrf) by convention.
	CTRFFile = "ctrf.json"
)

// Threshold is the reward at or above which bench counts an attempt as a
// pass: Harbor's rewards are fractions, bench's are 0 or 1. The fraction
// is kept as is beside it (Verdict.Value).
const Threshold = 1.0

// maxRewardFile bounds what is read of a reward or report file: the agent's
// code may have left a huge one.
const maxRewardFile = 4 << 20

// Verdict is what a Harbor verifier's output says of one attempt.
type Verdict struct {
	// Passed is the 0/1 reward bench applies: Value >= Threshold, and a
	// reward file that could be read.
	Passed bool
	// Value is the reward as the verifier wrote it (0 when none could be read).
	Value float64
	// Metrics are reward.json's numeric keys but "reward".
	Metrics map[string]float64
	// Source is the file the reward came from (RewardText or RewardJSON),
	// "" when none could be read.
	Source string
	// Cases are ctrf.json's per-test verdicts, sorted by ID (none without the file).
	Cases []testreport.Case
	// Reason says why the attempt scores 0 when the verifier's output
	// could not be read: no reward file, not a number, a broken ctrf.json.
	// The agent can cause each (it ran as the verifier's user, in the same
	// environment), so each scores 0 and is never an infrastructure failure.
	Reason string
	// TimedOut marks a verifier killed at its timeout.
	TimedOut bool `json:",omitempty"`
	// Kind is the kind of evidence: the verifier ran beside the agent's
	// result, in the same environment, so it is in-process evidence.
	Kind evaluator.Verdict
}

// Reward is 1 for a pass, 0 otherwise.
func (v Verdict) Reward() int {
	if v.Passed {
		return 1
	}
	return 0
}

// ReadVerdict reads the verifier's output folder (the host folder shown at
// LogsPath) after tests/test.sh ran. reward.txt decides when present, else
// reward.json; ctrf.json, when present, gives the per-test verdicts and
// must parse. Every problem is a Reason on a 0 verdict, never an error:
// the folder was writable by the agent's code.
func ReadVerdict(dir string) Verdict {
	v := Verdict{Kind: evaluator.VerdictInProcess}
	zero := func(format string, a ...any) Verdict {
		v.Passed, v.Value, v.Metrics, v.Source = false, 0, nil, ""
		v.Reason = fmt.Sprintf(format, a...)
		return v
	}
	txt, errTxt := readSmall(filepath.Join(dir, RewardText))
	js, errJS := readSmall(filepath.Join(dir, RewardJSON))
	switch {
	case errTxt == nil:
		r, err := parseRewardText(txt)
		if err != nil {
			return zero("%s/%s: %v", LogsPath, RewardText, err)
		}
		v.Value, v.Source = r, RewardText
		if errJS == nil {
			// Metrics still come from reward.json when both are there.
			if _, m, err := parseRewardJSON(js); err == nil {
				v.Metrics = m
			}
		}
	case !errors.Is(errTxt, fs.ErrNotExist):
		return zero("%s/%s: %v", LogsPath, RewardText, errTxt)
	case errJS == nil:
		r, m, err := parseRewardJSON(js)
		if err != nil {
			return zero("%s/%s: %v", LogsPath, RewardJSON, err)
		}
		v.Value, v.Metrics, v.Source = r, m, RewardJSON
	case !errors.Is(errJS, fs.ErrNotExist):
		return zero("%s/%s: %v", LogsPath, RewardJSON, errJS)
	default:
		return zero("the verifier wrote no reward (neither %s/%s nor %s/%s)", LogsPath, RewardText, LogsPath, RewardJSON)
	}
	if b, err := readSmall(filepath.Join(dir, CTRFFile)); err == nil {
		cases, err := ParseCTRF(b)
		if err != nil {
			return zero("%s/%s: %v", LogsPath, CTRFFile, err)
		}
		v.Cases = cases
	} else if !errors.Is(err, fs.ErrNotExist) {
		return zero("%s/%s: %v", LogsPath, CTRFFile, err)
	}
	v.Passed = v.Value >= Threshold
	return v
}

// readSmall reads a regular file of at most maxRewardFile bytes, without
// following a symbolic link (the agent's code may have planted one).
func readSmall(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxRewardFile {
		return nil, fmt.Errorf("%d bytes: larger than the %d bench reads", fi.Size(), maxRewardFile)
	}
	return os.ReadFile(path)
}

// parseRewardText reads reward.txt: one finite number, blanks around it.
func parseRewardText(b []byte) (float64, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, fmt.Errorf("empty: expected one number")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("expected one number, got %q", cutText(s, 80))
	}
	return f, nil
}

// parseRewardJSON reads reward.json: an object whose numeric keys are
// metrics, "reward" the main one (or the only numeric key when there is
// no "reward").
func parseRewardJSON(b []byte) (float64, map[string]float64, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return 0, nil, fmt.Errorf("expected a JSON object of numbers: %v", err)
	}
	metrics := map[string]float64{}
	for k, r := range raw {
		var f float64
		if err := json.Unmarshal(r, &f); err != nil {
			if k == "reward" {
				return 0, nil, fmt.Errorf("key reward: expected a number, got %s", cutText(string(r), 80))
			}
			continue // not a metric
		}
		metrics[k] = f
	}
	main, ok := metrics["reward"]
	switch {
	case ok:
		delete(metrics, "reward")
	case len(metrics) == 1:
		for k, f := range metrics {
			main = f
			delete(metrics, k)
		}
	case len(metrics) == 0:
		return 0, nil, fmt.Errorf("no numeric key: expected {\"reward\": NUMBER, ...}")
	default:
		keys := make([]string, 0, len(metrics))
		for k := range metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return 0, nil, fmt.Errorf("no key \"reward\" among the metrics %s: bench cannot tell which is the reward", strings.Join(keys, ", "))
	}
	if len(metrics) == 0 {
		metrics = nil
	}
	return main, metrics, nil
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
