package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/ollama/ollama/api"
	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/benchhq/bench/agent"
)

// ErrNotPulled is (errors.Is) the error of an Ollama endpoint that does
// not have the model asked for.
var ErrNotPulled = errors.New("model not pulled")

// NotPulledError says that an Ollama endpoint does not have a model.
type NotPulledError struct {
	Model, Endpoint string
}

func (e *NotPulledError) Error() string {
	return fmt.Sprintf("the model %s is not pulled on %s: run `ollama pull %s` there", e.Model, e.Endpoint, e.Model)
}

// Is makes a NotPulledError ErrNotPulled.
func (e *NotPulledError) Is(target error) bool { return target == ErrNotPulled }

// PullError is a pull that failed: the server's reason, and what the
// pull had got to.
type PullError struct {
	Model, Endpoint string
	// Stage is the last progress status the server sent ("" if none).
	Stage string
	// Done and Total are the bytes of the layers pulled so far.
	Done, Total int64
	Err         error
}

func (e *PullError) Error() string {
	where := ""
	if e.Total > 0 {
		where = fmt.Sprintf(" after %s of %s", Size(e.Done), Size(e.Total))
	}
	reason := e.Err.Error()
	switch {
	case strings.Contains(reason, "file does not exist"):
		reason += " (the registry has no model of that name: ollama.com/library lists them)"
	case strings.Contains(reason, "invalid model name"):
		reason += " (expected a name such as qwen3:0.6b or llama3.1:8b)"
	}
	return fmt.Sprintf("pull %s on %s failed%s: %s", e.Model, e.Endpoint, where, reason)
}

func (e *PullError) Unwrap() error { return e.Err }

// PullMissing pulls model onto every Ollama endpoint of the pool that does
// not have it, all at once, through the server's pull API (what `ollama
// pull` does), and tells progress how they go (nil tells nothing). An
// endpoint that has the model, or that speaks another API, is left alone;
// one that does not answer is an error naming it. It returns the
// endpoints it pulled onto. Whether every endpoint then serves the same
// weights is Check's to say.
func (p *Pool) PullMissing(ctx context.Context, model string, progress *PullProgress) ([]string, error) {
	var missing []*Endpoint
	for _, e := range p.eps {
		if e.API == Ollama && !ValidModelName(model) {
			return nil, &PullError{Model: model, Endpoint: e.Name, Err: errors.New("invalid model name")}
		}
		if e.API != Ollama || e.identify == nil {
			continue
		}
		_, err := e.identify(ctx, e, model)
		switch {
		case errors.Is(err, ErrNotPulled):
			missing = append(missing, e)
		case err != nil:
			return nil, fmt.Errorf("endpoint %s: %w", e.Name, err)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	progress.start(model, len(missing))
	errs := make([]error, len(missing))
	var wg sync.WaitGroup
	for i, e := range missing {
		wg.Go(func() { errs[i] = e.pull(ctx, model, progress) })
	}
	wg.Wait()
	names := make([]string, len(missing))
	for i, e := range missing {
		names[i] = e.Name
	}
	if err := errors.Join(errs...); err != nil {
		progress.finish(model, names, false)
		return nil, err
	}
	progress.finish(model, names, true)
	return names, nil
}

// pull pulls model onto an Ollama endpoint, then checks that it has it.
func (e *Endpoint) pull(ctx context.Context, model string, progress *PullProgress) error {
	u, err := url.Parse(e.Name)
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", e.Name, err)
	}
	client := api.NewClient(u, e.hc)
	pe := &PullError{Model: model, Endpoint: e.Name}
	layers := map[string][2]int64{} // digest: completed, total
	err = client.Pull(ctx, &api.PullRequest{Model: model}, func(r api.ProgressResponse) error {
		pe.Stage = r.Status
		if r.Digest != "" && r.Total > 0 {
			layers[r.Digest] = [2]int64{r.Completed, r.Total}
			pe.Done, pe.Total = 0, 0
			for _, l := range layers {
				pe.Done += l[0]
				pe.Total += l[1]
			}
		}
		progress.update(e.Name, model, r)
		return nil
	})
	switch {
	case err != nil && ctx.Err() != nil:
		pe.Err = context.Cause(ctx)
		return pe
	case err != nil:
		var se api.StatusError
		if errors.As(err, &se) && se.ErrorMessage != "" {
			err = errors.New(se.ErrorMessage) // the server's own words
		} else if agent.Unreachable(err) {
			err = fmt.Errorf("the server stopped answering: %w", err)
		}
		pe.Err = err
		return pe
	case pe.Stage != "success":
		// The client reads the stream to its end and says nothing of a
		// connection cut before the server said "success".
		last := "nothing"
		if pe.Stage != "" {
			last = fmt.Sprintf("%q", pe.Stage)
		}
		pe.Err = fmt.Errorf("the server ended the pull before it finished (its last word: %s)", last)
		return pe
	}
	if _, err := e.identify(ctx, e, model); err != nil {
		pe.Err = fmt.Errorf("the server said success, but: %w", err)
		return pe
	}
	return nil
}

// ValidModelName reports whether Ollama takes name as a model's name
// (by Ollama's own rule: "qwen3:0.6b", "library/llama3.1:8b",
// "host/namespace/model:tag"). Its server answers a name it does not
// take with "invalid model name" to a pull, and with an HTTP 500 to
// /api/show.
func ValidModelName(name string) bool {
	return ollamamodel.ParseName(name).IsValid()
}

// Size is n bytes in the decimal units Ollama shows (523 MB, 4.9 GB).
func Size(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%d MB", (n+5e5)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%d KB", (n+500)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
