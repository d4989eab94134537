package mcp

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/benchhq/bench/agent"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxRelists bounds how many times one connection lists its tools again
// in an attempt: a server that announces changes without end gets its
// list read this many times, then the rest of its announcements are
// noted and ignored.
const maxRelists = 20

// toolsChanged is the client's handler of notifications/tools/list_changed:
// it only marks the list stale (any number of announcements between two
// turns make one listing).
func (c *Conn) toolsChanged(context.Context, *sdk.ToolListChangedRequest) {
	c.announced.Add(1)
	c.stale.Store(true)
}

// Refresh lists the server's tools again if it announced a change since
// the last listing, and applies the same trust rules as Connect (the
// declaration's classes and allow-list, names and schemas that can be
// offered, description flags), leniently: a mismatch with the declaration
// is a note, not an error. It returns the change (nil when there was none
// to read, or when the list is the same). A listing that fails leaves
// the tools as they were, with a note. Never call it during a call of
// the connection's tools.
func (c *Conn) Refresh(ctx context.Context) *agent.ToolChange {
	if !c.stale.Swap(false) {
		return nil
	}
	origin := "mcp:" + c.srv.Name
	if c.relists >= maxRelists {
		if !c.relistCapped {
			c.relistCapped = true
			c.log.note("the server announced more than %d changes of its tool list; later ones are ignored", maxRelists)
			return &agent.ToolChange{Origin: origin, Notes: []string{fmt.Sprintf("server %q announced its tool list changed more than %d times: later changes are ignored", c.srv.Name, maxRelists)}}
		}
		return nil
	}
	c.relists++
	if why := c.unavailable(); why != "" {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	c.raw.reset()
	listed, err := c.listTools(lctx)
	if err != nil {
		msg := fmt.Sprintf("server %q announced a new tool list, but listing it failed: %s; its tools are unchanged", c.srv.Name, clip(timeoutHint(lctx, err, c.callTimeout).Error(), 500))
		c.log.note("%s", msg)
		return &agent.ToolChange{Origin: origin, Notes: []string{msg}}
	}
	catalog, tools, warnings := c.build(listed)
	ch := diffTools(c.catalog, catalog)
	ch.Origin = origin
	for _, t := range catalog {
		if !t.Offered && !t.Excluded && !slices.ContainsFunc(c.catalog, func(o ToolInfo) bool { return o.Name == t.Name && o.Reason == t.Reason }) {
			ch.Notes = append(ch.Notes, fmt.Sprintf("%s is not offered: %s", t.Name, t.Reason))
		}
	}
	for _, w := range warnings {
		if !slices.Contains(c.warnings, w) {
			ch.Notes = append(ch.Notes, w) // a mismatch with the declaration the new list brought
		}
	}
	c.catalog, c.tools, c.warnings = catalog, tools, warnings
	if len(ch.Added)+len(ch.Removed)+len(ch.Changed)+len(ch.Notes) == 0 {
		return nil
	}
	c.log.note("tool list changed: added %v, removed %v, changed %v", ch.Added, ch.Removed, ch.Changed)
	return ch
}

// diffTools says which offered tools were added, removed or changed
// (description, title, schema or class) from before to after.
func diffTools(before, after []ToolInfo) *agent.ToolChange {
	ch := &agent.ToolChange{}
	old := map[string]ToolInfo{}
	for _, t := range before {
		if t.Offered {
			old[t.Name] = t
		}
	}
	seen := map[string]bool{}
	for _, t := range after {
		if !t.Offered {
			continue
		}
		seen[t.Name] = true
		o, ok := old[t.Name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, t.Name)
		case o.Description != t.Description || o.Title != t.Title || o.Class != t.Class || !bytes.Equal(o.InputSchema, t.InputSchema):
			ch.Changed = append(ch.Changed, t.Name)
		}
	}
	for _, t := range before {
		if t.Offered && !seen[t.Name] {
			ch.Removed = append(ch.Removed, t.Name)
		}
	}
	return ch
}

// Refresher returns a Config.Refresh for an attempt's connections: before
// each turn it lists again the tools of every server that announced a
// change, and puts them in the registry in place of the server's old
// ones. A new tool whose name is taken (by a built-in or another
// server's tool) is refused, with a note: a foreign tool never shadows
// another.
func Refresher(conns []*Conn) func(context.Context, *agent.Registry) []agent.ToolChange {
	return func(ctx context.Context, reg *agent.Registry) []agent.ToolChange {
		var out []agent.ToolChange
		for _, c := range conns {
			ch := c.Refresh(ctx)
			if ch == nil {
				continue
			}
			if len(ch.Added)+len(ch.Removed)+len(ch.Changed) > 0 {
				for _, err := range reg.Replace(ch.Origin, c.Tools()) {
					ch.Notes = append(ch.Notes, fmt.Sprintf("refused: %v", err))
				}
			}
			out = append(out, *ch)
		}
		return out
	}
}
