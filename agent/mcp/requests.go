package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server may ask of its client. bench declares none of these
// capabilities: a server gets nothing from the harness but tool calls.
// The SDK would answer roots/list with an empty list and the others with
// errors of its own choosing; refuseRequests answers all three at once
// with "method not found" (-32601), on whatever stream the request came,
// and notes it in the server's log, so that a server that waits for an
// answer is not left waiting for its own timeout and the operator sees
// what it asked.
var refused = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// codeMethodNotFound is JSON-RPC's "method not found".
const codeMethodNotFound = -32601

// refuseRequests is the client's receiving middleware that refuses the
// requests of capabilities bench does not declare.
func (c *Conn) refuseRequests(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		what, ok := refused[method]
		if !ok {
			return next(ctx, method, req)
		}
		c.log.note("the server sent %s, which was refused at once: bench's client declares no %s capability", method, what)
		return nil, &jsonrpc.Error{Code: codeMethodNotFound, Message: fmt.Sprintf("%s is not supported: the client declares no %s capability", method, what)}
	}
}

// maxLogMessage bounds one server log message kept in the log.
const maxLogMessage = 2000

// logMessage keeps a server's notifications/message in its log, where the
// operator reads it (never the model).
func (c *Conn) logMessage(_ context.Context, req *sdk.LoggingMessageRequest) {
	p := req.Params
	if p == nil {
		return
	}
	text := fmt.Sprint(p.Data)
	if s, ok := p.Data.(string); ok {
		text = s
	}
	logger := ""
	if p.Logger != "" {
		logger = " " + p.Logger
	}
	c.log.note("server log (%s%s): %s", p.Level, logger, clip(strings.TrimSpace(text), maxLogMessage))
}
