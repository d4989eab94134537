package agent

import (
	"context"
	"fmt"
)

// Call is a tool call as the permission policy sees it.
type Call struct {
	Tool   string
	Class  Class
	Origin string
	Args   map[string]any
}

// Verdict is a policy's answer for one call.
type Verdict struct {
	Decision Decision
	// Rule names the rule that matched, e.g. "class exec" or "default".
	Rule string
	// Approver names who answered an "ask" (empty when no one was asked).
	Approver string
	// Reason, when set, is shown to the model with a denial.
	Reason string
}

// Policy decides whether a call may run. It sees the call (tool, class,
// arguments) and nothing the tool says of itself.
type Policy interface {
	Decide(ctx context.Context, call Call) Verdict
}

// ClassPolicy decides by class alone: each class maps to a decision, and a
// class it does not know (or an empty one) is denied. It never asks.
type ClassPolicy map[Class]Decision

// Decide implements Policy.
func (p ClassPolicy) Decide(_ context.Context, c Call) Verdict {
	if c.Class == "" {
		return Verdict{Decision: Deny, Rule: "no class", Reason: "the operator gave this tool no permission class"}
	}
	d, ok := p[c.Class]
	if !ok {
		return Verdict{Decision: Deny, Rule: "unknown class " + string(c.Class)}
	}
	if d == Ask {
		return Verdict{Decision: Deny, Rule: "class " + string(c.Class), Reason: "it needs approval and no approver is configured"}
	}
	return Verdict{Decision: d, Rule: "class " + string(c.Class)}
}

// AllowBuiltins is the policy of a run with no permission profile: the
// built-in classes (read, write, exec) are allowed, anything else denied.
func AllowBuiltins() ClassPolicy {
	return ClassPolicy{ClassRead: Allow, ClassWrite: Allow, ClassExec: Allow}
}

// DeniedText is the observation a denied call returns. It says the denial
// comes from policy and that retrying will not help, so that the model does
// not take a forbidden tool for a broken one.
func DeniedText(c Call, v Verdict) string {
	class := string(c.Class)
	if class == "" {
		class = "none"
	}
	msg := fmt.Sprintf("Denied by policy: this run does not allow %s (permission class %s; rule: %s).", c.Tool, class, v.Rule)
	if v.Reason != "" {
		msg += " Reason: " + v.Reason + "."
	}
	return msg + " The tool did not run. This is a rule of the run, not a failure of the tool: retrying will not help. Do the task another way with the tools that are allowed, or finish."
}
