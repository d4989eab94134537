package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
	ollamamodel "github.com/ollama/ollama/types/model"
)

// ContextLength asks the server for the model's own context length, the
// <arch>.context_length of /api/show's model_info (general.architecture
// names the arch). Ollama lowers a num_ctx above it to it without telling
// the client (only its log says so), and then cuts prompts at the lower
// value: truncation must be judged against EffectiveContext. It returns 0
// when the server does not say; a model that is not pulled or a server that
// does not answer is a *ModelError with its Hint. So is a model whose
// capabilities, when the server lists them, lack tools (ErrNoTools): every
// request of an attempt offers tools, and each would fail.
func (o *Ollama) ContextLength(ctx context.Context, model string) (int, error) {
	resp, err := o.client.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return 0, &ModelError{Host: o.host, Model: model, Err: err}
	}
	if len(resp.Capabilities) > 0 && !slices.Contains(resp.Capabilities, ollamamodel.CapabilityTools) {
		return 0, &ModelError{Host: o.host, Model: model, Err: fmt.Errorf("%w (its capabilities: %s)", ErrNoTools, joinCapabilities(resp.Capabilities))}
	}
	return contextLengthOf(resp.ModelInfo)
}

// ErrNoTools is a model's own answer, from the capabilities the server
// lists for it, that it cannot take tools.
var ErrNoTools = errors.New("the model does not support tools")

func joinCapabilities(caps []ollamamodel.Capability) string {
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// OnlyUnknown reports whether an error of ContextLength means only that
// the server would not tell the context length (it answered /api/show with
// an error other than "not found", or with a malformed model_info): the
// run can go on, judging truncation against num_ctx alone. A model that is
// not pulled, or a server that does not answer, is not such an error.
func OnlyUnknown(err error) bool {
	var se api.StatusError
	switch {
	case err == nil:
		return false
	case errors.As(err, &se):
		return se.StatusCode != http.StatusNotFound
	case Unreachable(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	var me *ModelError
	return !errors.As(err, &me) // a malformed answer
}

// contextLengthOf reads <arch>.context_length from model_info: 0 when it
// is absent, an error when it is not a positive integer.
func contextLengthOf(info map[string]any) (int, error) {
	arch, _ := info["general.architecture"].(string)
	if arch == "" {
		return 0, nil
	}
	key := arch + ".context_length"
	v, ok := info[key]
	if !ok {
		return 0, nil
	}
	n, err := NumCtx(map[string]any{"num_ctx": v})
	if err != nil || n < 1 {
		return 0, fmt.Errorf("/api/show: model_info.%s: expected a positive integer, got %v", key, v)
	}
	return n, nil
}

// EffectiveContext is the context a server really uses for a request with
// num_ctx numCtx to a model whose own context length is modelCtx: the
// smaller of the two. Either may be 0 (unknown), and then the other is the
// answer.
func EffectiveContext(numCtx, modelCtx int) int {
	switch {
	case numCtx <= 0:
		return max(modelCtx, 0)
	case modelCtx <= 0:
		return numCtx
	}
	return min(numCtx, modelCtx)
}

// ContextWarning says, in one sentence, that num_ctx is above the model's
// context length and what that does, or "" when it is not (or either is
// unknown).
func ContextWarning(model string, numCtx, modelCtx int) string {
	if modelCtx <= 0 || numCtx <= modelCtx {
		return ""
	}
	return fmt.Sprintf("num_ctx %d is above the context length of %s (%d): Ollama lowers it to %d without telling the client, so prompts longer than %d are cut; bench judges truncation against %d",
		numCtx, model, modelCtx, modelCtx, modelCtx, modelCtx)
}

// ContextLengther is a model client that can ask for a model's own
// context length (Ollama; an OpenAI-compatible server has no such call).
type ContextLengther interface {
	ContextLength(ctx context.Context, model string) (int, error)
}

// ModelContextLength is m's ContextLength when its client can ask, and 0
// (not known) otherwise.
func ModelContextLength(ctx context.Context, m Model, model string) (int, error) {
	if cl, ok := m.(ContextLengther); ok {
		return cl.ContextLength(ctx, model)
	}
	return 0, nil
}
