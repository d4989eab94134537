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
	// Decision is Allow or Deny: an Ask has been answered by the time a
	// verdict is returned.
	Decision Decision
	// Rule names the rule that matched, e.g. "class exec", "tools.run_command"
	// or `deny_write "tests/**"`.
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

// ProfilePolicy decides calls by a permission profile, and asks its
// approver when the profile says ask. It is safe for concurrent use if its
// approver is.
type ProfilePolicy struct {
	// Profile gives the rules; nil means the standard profile, where the
	// built-in classes (read, write, exec) are allowed and anything else is
	// denied. A zero ProfilePolicy is the policy of a run with no profile.
	Profile *Profile
	// Approver answers the calls the profile says to ask about; nil denies
	// them (the "deny" approver).
	Approver Approver
	// Workspace, when set, resolves the path of a write (links, absolute
	// paths) before deny_write is checked, so that a path cannot dodge a
	// rule by another spelling.
	Workspace *Workspace
	// Labels are passed on to the approver (for example arm, task and
	// attempt), to help a person or a judge place the call.
	Labels map[string]string
}

// Decide implements Policy.
func (p *ProfilePolicy) Decide(ctx context.Context, c Call) Verdict {
	prof := p.Profile
	if prof == nil {
		prof = BuiltinProfiles()[ProfileStandard]
	}
	v := prof.decide(c, p.Workspace)
	if v.Decision != Ask {
		return v
	}
	appr := p.Approver
	if appr == nil {
		appr = DenyApprover{}
	}
	v.Approver = appr.Name()
	ans, err := appr.Approve(ctx, ApprovalRequest{
		Tool:      c.Tool,
		Class:     c.Class,
		Origin:    c.Origin,
		Arguments: c.Args,
		Profile:   prof.Name,
		Rule:      v.Rule,
		Labels:    p.Labels,
	})
	switch {
	case err != nil:
		v.Decision, v.Reason = Deny, fmt.Sprintf("it needs approval and the approver failed (%v), which counts as a refusal", err)
	case ans.Decision == Allow:
		v.Decision, v.Reason = Allow, ""
	default:
		v.Decision = Deny
		v.Reason = "it needs approval and the approver refused it"
		if ans.Reason != "" {
			v.Reason += ": " + ans.Reason
		}
	}
	return v
}

// DeniedText is the observation a denied call returns. It says the denial
// comes from policy and that retrying will not help, so that the model does
// not take a forbidden tool for a broken one.
func DeniedText(c Call, v Verdict) string {
	class := string(c.Class)
	if class == "" {
		class = "none"
	}
	msg := fmt.Sprintf("Denied by policy: this run does not allow this call of %s (permission class %s; rule: %s).", c.Tool, class, v.Rule)
	if v.Reason != "" {
		msg += " Reason: " + v.Reason + "."
	}
	return msg + " The tool did not run. This is a rule of the run, not a failure of the tool: retrying will not help. Do the task another way with what is allowed, or finish."
}
