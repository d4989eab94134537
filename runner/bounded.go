package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
)

// bounded calls request under the plan's request timeout: every request
// bench makes to a model server before the first attempt (the model's
// context length, the tools' prompt tokens) is bounded as the attempts'
// chat is, so that a server that accepts connections and never answers
// stops the run with a message rather than hanging it. A request that
// outlived the bound says so and what to do; one cut short by ctx (an
// interruption) is returned as it is.
func bounded[T any](ctx context.Context, timeout time.Duration, request func(context.Context) (T, error)) (T, error) {
	if timeout <= 0 {
		return request(ctx)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, agent.ErrRequestTimeout)
	defer cancel()
	v, err := request(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), agent.ErrRequestTimeout) {
		return v, noReply(timeout, err)
	}
	return v, err
}

// noReply says that a model server gave no reply within timeout, and
// what to do about it.
func noReply(timeout time.Duration, err error) error {
	return fmt.Errorf("the model server accepted the request but gave no reply within %s: it may be stuck or overloaded (restart it, e.g. `ollama serve`, or point --host at one that answers; a slow model on a CPU may need a longer --request-timeout): %w", timeout, err)
}

// checkTimeout is the bound of endpoint.Pool.Check on one question to a
// server (endpoint's own, repeated here for the message).
const checkTimeout = 10 * time.Second

// silentServer adds what to do to err when the check of the model ran out
// of time on a server that accepted the connection (ctx itself not done).
func silentServer(ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !agent.Unreachable(err) {
		return noReply(checkTimeout, err)
	}
	return err
}

// Bounded is a model whose every request (chat, and the question of its
// context length when the client can ask it) is bounded by Timeout, as a
// run bounds its own: for the measurements made outside a run (bench
// overhead). A request that outlives it fails, saying what to do.
type Bounded struct {
	Model   agent.Model
	Timeout time.Duration
}

// Chat sends req under the bound.
func (m Bounded) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	return bounded(ctx, m.Timeout, func(ctx context.Context) (*api.ChatResponse, error) {
		return m.Model.Chat(ctx, req)
	})
}

// ContextLength asks the model's context length under the bound (0, nil
// when the client cannot ask, as agent.ModelContextLength).
func (m Bounded) ContextLength(ctx context.Context, model string) (int, error) {
	return bounded(ctx, m.Timeout, func(ctx context.Context) (int, error) {
		return agent.ModelContextLength(ctx, m.Model, model)
	})
}
