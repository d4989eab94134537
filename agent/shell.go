package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/benchhq/bench/internal/procio"
)

// drainDelay is how long run_command still reads output after the command
// and its process group are gone, for a process that left the group
// (setsid) while holding the output pipe.
const drainDelay = time.Second

// defaultPath is the PATH commands get when the operator has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

type runCommandTool struct {
	ws         *Workspace
	timeout    time.Duration
	maxTimeout time.Duration
	outputCap  int
	envNames   []string
	launch     Launcher
}

func (t runCommandTool) Spec() Spec {
	maxSecs := int(t.maxTimeout / time.Second)
	return Spec{
		Name: "run_command",
		Description: fmt.Sprintf("Run a shell command with /bin/sh -c in the workspace folder; HOME is a folder of your own outside it. "+
			"stdin is empty; stdout and stderr come back together, cut to %s (the start and the end are kept). "+
			"The result starts with the exit status. The command is killed after timeout_seconds (default %d, at most %d); "+
			"processes it leaves in the background are killed when it ends.",
			byteSize(t.outputCap), int(t.timeout/time.Second), maxSecs),
		InputSchema: objectSchema([]string{"command", "timeout_seconds"}, map[string]*jsonschema.Schema{
			"command": {Type: "string", MinLength: jsonschema.Ptr(1), Description: "The shell command line, e.g. go test ./..."},
			"timeout_seconds": {Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(maxSecs)),
				Description: fmt.Sprintf("Seconds before the command is killed. Default: %d.", int(t.timeout/time.Second))},
		}, "command"),
		Class:  ClassExec,
		Origin: OriginBuiltin,
	}
}

// environ is the environment of a command: the allowed names the operator
// has set (the launcher sets HOME). Nothing else of the operator's
// environment (tokens, keys) reaches the command.
func (t runCommandTool) environ() []string {
	var env []string
	seen := map[string]bool{"HOME": true}
	for _, name := range append([]string{"PATH", "LANG"}, t.envNames...) {
		if seen[name] || name == "" || strings.ContainsAny(name, "=\x00") {
			continue
		}
		seen[name] = true
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		} else if name == "PATH" {
			env = append(env, "PATH="+defaultPath)
		}
	}
	return env
}

func (t runCommandTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	command, err := stringArg(args, "command")
	if err != nil {
		return *errResult("%v", err), nil
	}
	if strings.TrimSpace(command) == "" {
		return *errResult("command is empty"), nil
	}
	if strings.IndexByte(command, 0) >= 0 {
		return *errResult("command contains a NUL byte"), nil
	}
	secs, err := intArg(args, "timeout_seconds", 0)
	if err != nil {
		return *errResult("%v", err), nil
	}
	timeout := t.timeout
	if secs > 0 {
		timeout = time.Duration(secs) * time.Second
	}
	if secs < 0 || timeout > t.maxTimeout {
		return *errResult("timeout_seconds must be between 1 and %d, not %d", int(t.maxTimeout/time.Second), secs), nil
	}

	argv := []string{"/bin/sh", "-c", command}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	if t.launch != nil {
		if cmd, err = t.launch(runCtx, t.ws.Root(), argv, t.environ()); err != nil {
			// Not the model's doing: the sandbox cannot be made.
			return Result{}, fmt.Errorf("run command: %w", err)
		}
	} else {
		cmd = exec.CommandContext(runCtx, argv[0], argv[1:]...)
		cmd.Dir = t.ws.Root()
		cmd.Env = append(t.environ(), "HOME="+t.ws.Root())
	}
	// stdin stays nil: /dev/null. At the timeout, the whole process group
	// dies: the shell and everything it started (a launcher's command is
	// killed its own way).
	if t.launch == nil {
		procio.KillGroupOnCancel(cmd, 2*drainDelay)
	}

	// The output pipe is ours, not exec's: Wait returns when the shell
	// exits, whoever still holds the pipe, and the reader keeps a bounded
	// head and tail however much is written.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run command: output pipe: %w", err)
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	startErr := cmd.Start()
	pw.Close()
	if startErr != nil {
		// Not the model's doing: /bin/sh or the wrapper is missing.
		return Result{}, fmt.Errorf("run command: %w", startErr)
	}
	out := procio.New(t.outputCap, t.outputCap/2)
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr) //nolint:errcheck // ends with EOF or a closed pipe
		close(copied)
	}()
	began := time.Now()
	waitErr := cmd.Wait()
	elapsed := time.Since(began)
	// Background processes left behind die with the command.
	procio.SignalGroup(cmd, syscall.SIGKILL) //nolint:errcheck // ESRCH when none are left
	select {
	case <-copied:
	case <-time.After(drainDelay):
		pr.Close()
		<-copied
	}

	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("run command: %w", ctx.Err())
	}
	var b strings.Builder
	isErr := true
	var exitErr *exec.ExitError
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&b, "killed after %s: the command ran past its timeout (timeout_seconds=%d, at most %d)",
			timeout, int(timeout/time.Second), int(t.maxTimeout/time.Second))
	case waitErr == nil:
		b.WriteString("exit status 0")
		isErr = false
	case errors.As(waitErr, &exitErr):
		if st, ok := exitErr.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			fmt.Fprintf(&b, "killed by signal %s", st.Signal())
		} else {
			fmt.Fprintf(&b, "exit status %d", exitErr.ExitCode())
		}
	default:
		fmt.Fprintf(&b, "the command failed after %s: %v", elapsed.Round(time.Millisecond), waitErr)
	}
	if out.Len() == 0 {
		b.WriteString("\n(no output)")
	} else {
		b.WriteString("\n")
		b.WriteString(out.String())
	}
	return Result{Text: b.String(), IsError: isErr}, nil
}

// byteSize words a size for the model.
func byteSize(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
