package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/internal/procio"
)

// ApprovalRequest is a call that a profile says to ask about, as an
// approver sees it. An external approver command reads it as JSON on stdin.
type ApprovalRequest struct {
	Tool      string         `json:"tool"`
	Class     Class          `json:"class"`
	Origin    string         `json:"origin"`
	Arguments map[string]any `json:"arguments"`
	// Profile and Rule say which profile and which of its rules asked.
	Profile string `json:"profile"`
	Rule    string `json:"rule"`
	// Labels place the call (arm, task, attempt), as the runner set them.
	Labels map[string]string `json:"labels,omitempty"`
}

// Answer is an approver's answer: Allow or Deny, and for a denial an
// optional reason that the model is shown.
type Answer struct {
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
}

// Approver answers the calls a profile says to ask about. An error counts
// as a refusal.
type Approver interface {
	// Name identifies the approver in the stored decisions ("deny",
	// "allow", "terminal", "command:./judge.sh").
	Name() string
	Approve(ctx context.Context, req ApprovalRequest) (Answer, error)
}

// DenyApprover refuses every call: ask means deny. It is the approver of an
// arm that names none.
type DenyApprover struct{}

// Name implements Approver.
func (DenyApprover) Name() string { return "deny" }

// Approve implements Approver.
func (DenyApprover) Approve(context.Context, ApprovalRequest) (Answer, error) {
	return Answer{Decision: Deny, Reason: "this run refuses every call that needs approval"}, nil
}

// AllowApprover allows every call: ask means allow, recorded as asked.
type AllowApprover struct{}

// Name implements Approver.
func (AllowApprover) Name() string { return "allow" }

// Approve implements Approver.
func (AllowApprover) Approve(context.Context, ApprovalRequest) (Answer, error) {
	return Answer{Decision: Allow}, nil
}

// DefaultApproverTimeout bounds one answer of an approver command.
const DefaultApproverTimeout = time.Minute

// approverOutputLimit bounds what is read of an approver command's output.
const approverOutputLimit = 64 << 10

// CommandApprover runs an external command for each call: the command
// reads the ApprovalRequest as JSON on stdin and answers on stdout, either
// with a line starting with "allow" or "deny" (the rest of the line is the
// reason), or with JSON {"decision": "allow"|"deny", "reason": "..."}. A
// command that fails, times out or answers anything else refuses the call.
// It runs with the operator's environment: it is the operator's program.
type CommandApprover struct {
	// Argv is the program and its arguments.
	Argv []string
	// Dir is the working folder of the command ("" for bench's own).
	Dir string
	// Timeout bounds one answer; zero means DefaultApproverTimeout.
	Timeout time.Duration
}

// Name implements Approver.
func (a *CommandApprover) Name() string { return "command:" + strings.Join(a.Argv, " ") }

// Approve implements Approver.
func (a *CommandApprover) Approve(ctx context.Context, req ApprovalRequest) (Answer, error) {
	if len(a.Argv) == 0 {
		return Answer{}, errors.New("approver command: no program")
	}
	in, err := json.Marshal(req)
	if err != nil {
		return Answer{}, fmt.Errorf("approver command: encode the call: %w", err)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultApproverTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Argv[0], a.Argv[1:]...)
	cmd.Dir = a.Dir
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	stdout, stderr := procio.New(approverOutputLimit, approverOutputLimit/2), procio.New(4<<10, 2<<10)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	procio.KillGroupOnCancel(cmd, time.Second)
	err = cmd.Run()
	if ctx.Err() != nil {
		return Answer{}, fmt.Errorf("approver command %s: no answer within %s", a.Argv[0], timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + firstLines(msg, 3)
		}
		return Answer{}, fmt.Errorf("approver command %s: %v%s", a.Argv[0], err, msg)
	}
	ans, err := parseAnswer(stdout.String())
	if err != nil {
		return Answer{}, fmt.Errorf("approver command %s: %w", a.Argv[0], err)
	}
	return ans, nil
}

// parseAnswer reads an approver's answer: JSON, or a line "allow|deny reason".
func parseAnswer(out string) (Answer, error) {
	s := strings.TrimSpace(out)
	if strings.HasPrefix(s, "{") {
		var ans Answer
		if err := json.Unmarshal([]byte(s), &ans); err != nil {
			return Answer{}, fmt.Errorf("answer is not valid JSON: %w", err)
		}
		ans.Decision = Decision(strings.ToLower(string(ans.Decision)))
		if ans.Decision != Allow && ans.Decision != Deny {
			return Answer{}, fmt.Errorf("answered decision %q, expected \"allow\" or \"deny\"", ans.Decision)
		}
		return ans, nil
	}
	line, _, _ := strings.Cut(s, "\n")
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch d := Decision(strings.ToLower(strings.TrimRight(word, ".:,;"))); d {
	case Allow, Deny:
		return Answer{Decision: d, Reason: strings.TrimSpace(rest)}, nil
	}
	if len(line) > 80 {
		line = line[:80] + "..."
	}
	return Answer{}, fmt.Errorf("answered %q, expected a line starting with allow or deny", line)
}

// TerminalApprover asks a person: it shows the call and reads y or n. It is
// meant for trying a single attempt by hand; concurrent asks wait their
// turn. The attempt's wall-time limit keeps running while it waits.
type TerminalApprover struct {
	// Open returns the terminal to talk on; it is closed after each
	// question. ParseApprover's "terminal" opens /dev/tty.
	Open func() (io.ReadWriteCloser, error)

	mu sync.Mutex
}

// Name implements Approver.
func (a *TerminalApprover) Name() string { return "terminal" }

// Approve implements Approver.
func (a *TerminalApprover) Approve(ctx context.Context, req ApprovalRequest) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Answer{}, err
	}
	tty, err := a.Open()
	if err != nil {
		return Answer{}, fmt.Errorf("terminal approver: %w", err)
	}
	defer tty.Close()
	args, _ := json.MarshalIndent(req.Arguments, "  ", "  ")
	if len(args) > 2000 {
		args = append(procio.TrimLastRune(args[:2000]), "..."...)
	}
	var where string
	for _, k := range []string{"arm", "task", "attempt"} {
		if v := req.Labels[k]; v != "" {
			where += fmt.Sprintf(" %s=%s", k, v)
		}
	}
	fmt.Fprintf(tty, "\nbench%s: the model calls %s (class %s, from %s); profile %s says ask (%s).\n  arguments: %s\nAllow this call? [y/N] ",
		where, req.Tool, req.Class, req.Origin, req.Profile, req.Rule, args)
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(tty).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case <-ctx.Done():
		tty.Close() // unblocks the reader
		return Answer{}, ctx.Err()
	case l := <-got:
		switch strings.ToLower(strings.TrimSpace(l.s)) {
		case "y", "yes", "allow":
			return Answer{Decision: Allow}, nil
		}
		if l.err != nil && l.s == "" {
			return Answer{}, fmt.Errorf("terminal approver: read the answer: %w", l.err)
		}
		return Answer{Decision: Deny, Reason: "the person at the terminal refused it"}, nil
	}
}

// ParseApprover turns an approver named in a run file or a flag into an
// Approver:
//
//	deny                always refuse (also the meaning of "")
//	allow               always allow
//	terminal            ask on the controlling terminal (/dev/tty)
//	command:PROG ARGS   run PROG with ARGS for each call (see CommandApprover)
//
// The command's words are split at spaces, with no quoting: put anything
// more complex in a script. A relative PROG with a slash is relative to
// baseDir (the run file's folder); one without is looked up in PATH.
func ParseApprover(spec, baseDir string) (Approver, error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "", "deny":
		return DenyApprover{}, nil
	case "allow":
		return AllowApprover{}, nil
	case "terminal":
		f, err := openTTY()
		if err != nil {
			return nil, fmt.Errorf("approver %q: no terminal to ask on: %w", spec, err)
		}
		f.Close()
		return &TerminalApprover{Open: openTTY}, nil
	}
	rest, ok := strings.CutPrefix(spec, "command:")
	if !ok {
		return nil, fmt.Errorf("approver %q: expected deny, allow, terminal or command:PROGRAM ARGS", spec)
	}
	argv := strings.Fields(rest)
	if len(argv) == 0 {
		return nil, fmt.Errorf("approver %q: no program after command:", spec)
	}
	prog := argv[0]
	switch {
	case strings.Contains(prog, "/"):
		if !filepath.IsAbs(prog) {
			abs, err := filepath.Abs(filepath.Join(baseDir, prog))
			if err != nil {
				return nil, fmt.Errorf("approver %q: %w", spec, err)
			}
			prog = abs
		}
		fi, err := os.Stat(prog)
		if err != nil {
			return nil, fmt.Errorf("approver %q: %w", spec, err)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("approver %q: %s is not an executable file", spec, prog)
		}
	default:
		if _, err := exec.LookPath(prog); err != nil {
			return nil, fmt.Errorf("approver %q: %w", spec, err)
		}
	}
	return &CommandApprover{Argv: append([]string{prog}, argv[1:]...), Dir: baseDir}, nil
}

func openTTY() (io.ReadWriteCloser, error) {
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}
