package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/procio"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReaderTool is the server's own name of the resource reader bench adds
// for a server that declares resources: the model sees it as
// "<server>__read_resource". A tool of the server with that name is not
// offered (bench's reader holds the name).
const ReaderTool = "read_resource"

// Where the reader's class comes from (ToolInfo.ClassSource).
const (
	// ClassFromResourceClass: the declaration's resource_class.
	ClassFromResourceClass = "resource_class"
	// ClassFromReaderDefault: read, the reader's default.
	ClassFromReaderDefault = "reader default"
)

// maxResourceList bounds how many resources (and templates) a listing
// gathers across its pages.
const maxResourceList = 500

// ResourceInfo is one resource a server lists (for inspect).
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// TemplateInfo is one resource template a server lists (for inspect).
type TemplateInfo struct {
	URITemplate string `json:"uri_template"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
}

// PromptInfo is one prompt a server lists (for inspect; bench never uses
// prompts).
type PromptInfo struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
}

// Description is what `bench mcp inspect` shows beyond the tools: the
// server's capabilities, resources, templates and prompts, with what went
// wrong listing them.
type Description struct {
	Capabilities *sdk.ServerCapabilities `json:"capabilities,omitempty"`
	Resources    []ResourceInfo          `json:"resources,omitempty"`
	Templates    []TemplateInfo          `json:"resource_templates,omitempty"`
	Prompts      []PromptInfo            `json:"prompts,omitempty"`
	Errors       []string                `json:"errors,omitempty"`
}

// Describe lists the server's resources, resource templates and prompts
// (each through every page, at most maxResourceList), as far as its
// capabilities declare them. A listing that fails is an entry of Errors.
func (c *Conn) Describe(ctx context.Context) Description {
	var d Description
	ir := c.session.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return d
	}
	d.Capabilities = ir.Capabilities
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	if ir.Capabilities.Resources != nil {
		var err error
		if d.Resources, err = c.listResources(ctx); err != nil {
			d.Errors = append(d.Errors, "resources/list: "+err.Error())
		}
		if err := pages(ctx, func(cursor string) (string, error) {
			res, err := c.session.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return "", err
			}
			for _, t := range res.ResourceTemplates {
				d.Templates = append(d.Templates, TemplateInfo{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType})
			}
			return res.NextCursor, nil
		}, func() int { return len(d.Templates) }); err != nil {
			d.Errors = append(d.Errors, "resources/templates/list: "+err.Error())
		}
	}
	if ir.Capabilities.Prompts != nil {
		if err := pages(ctx, func(cursor string) (string, error) {
			res, err := c.session.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return "", err
			}
			for _, p := range res.Prompts {
				pi := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
				for _, a := range p.Arguments {
					pi.Arguments = append(pi.Arguments, a.Name)
				}
				d.Prompts = append(d.Prompts, pi)
			}
			return res.NextCursor, nil
		}, func() int { return len(d.Prompts) }); err != nil {
			d.Errors = append(d.Errors, "prompts/list: "+err.Error())
		}
	}
	return d
}

// listResources lists the server's resources through every page.
func (c *Conn) listResources(ctx context.Context) ([]ResourceInfo, error) {
	var out []ResourceInfo
	err := pages(ctx, func(cursor string) (string, error) {
		res, err := c.session.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, r := range res.Resources {
			out = append(out, ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
		}
		return res.NextCursor, nil
	}, func() int { return len(out) })
	return out, err
}

// errListFull ends a listing that reached maxResourceList.
var errListFull = errors.New("list full")

// pages follows a paginated listing: page gets a cursor and returns the
// next; it ends at an empty cursor, a cursor seen before (an error), or
// when count reaches maxResourceList (not an error: the rest is left).
func pages(ctx context.Context, page func(cursor string) (string, error), count func() int) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxListPages {
		next, err := page(cursor)
		switch {
		case err != nil:
			return err
		case next == "" || count() >= maxResourceList:
			return nil
		case seen[next]:
			return fmt.Errorf("the cursor %q came twice (a pagination loop)", next)
		}
		seen[next] = true
		cursor = next
	}
	return fmt.Errorf("did not end after %d pages", maxListPages)
}

// hasResources reports whether the server declares resources.
func (c *Conn) hasResources() bool {
	ir := c.session.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil
}

// readerTool is the resource reader of a server that declares resources:
// given a URI it reads the resource; without one it lists them. Its class
// is the declaration's resource_class, read by default.
type readerTool struct {
	conn *Conn
	spec agent.Spec
}

var _ agent.Tool = (*readerTool)(nil)

// newReader makes the server's reader and its catalog entry.
func (c *Conn) newReader() (*readerTool, ToolInfo) {
	class, source := agent.ClassRead, ClassFromReaderDefault
	if c.srv.ResourceClass != "" {
		class, source = agent.Class(c.srv.ResourceClass), ClassFromResourceClass
	}
	name := c.srv.Name + Separator + ReaderTool
	desc := fmt.Sprintf("Reads a resource of the MCP server %q by its URI, such as one given in a resource link. Without a uri, lists the server's resources and resource templates.", c.srv.Name)
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"uri": {Type: "string", Description: "The resource's URI; omit it to list the resources."},
		},
		PropertyOrder:        []string{"uri"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	raw, _ := json.Marshal(schema)
	spec := agent.Spec{Name: name, Description: desc, InputSchema: schema, Class: class, Origin: "mcp:" + c.srv.Name}
	info := ToolInfo{Server: c.srv.Name, Tool: ReaderTool, Name: name, Description: desc + " (added by bench)", Class: class, ClassSource: source, InputSchema: raw, Offered: true}
	return &readerTool{conn: c, spec: spec}, info
}

// Spec implements agent.Tool.
func (t *readerTool) Spec() agent.Spec { return t.spec }

// Call implements agent.Tool: every failure of the server is an error
// observation.
func (t *readerTool) Call(ctx context.Context, args map[string]any) (agent.Result, error) {
	c := t.conn
	if why := c.unavailable(); why != "" {
		return agent.Result{Text: fmt.Sprintf("%s cannot be called: %s", t.spec.Name, why), IsError: true, Kind: "transport"}, nil
	}
	uri, _ := args["uri"].(string)
	cctx, cancel := context.WithTimeoutCause(ctx, c.callTimeout, errCallTimeout)
	defer cancel()
	fail := func(what string, err error) (agent.Result, error) {
		if ctx.Err() != nil {
			return agent.Result{}, fmt.Errorf("call %s: %w", t.spec.Name, ctx.Err())
		}
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return agent.Result{Text: fmt.Sprintf("%s: server %q did not answer %s within %s; the call was abandoned", t.spec.Name, c.srv.Name, what, c.callTimeout), IsError: true, Kind: "timeout"}, nil
		}
		return agent.Result{Text: fmt.Sprintf("%s: %s failed: %s", t.spec.Name, what, clip(err.Error(), 2000)), IsError: true, Kind: "protocol"}, nil
	}
	if strings.TrimSpace(uri) == "" {
		list, err := c.listResources(cctx)
		if err != nil {
			return fail("resources/list", err)
		}
		return agent.Result{Text: formatResourceList(c.srv.Name, list)}, nil
	}
	res, err := c.session.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return fail("reading "+uri, err)
	}
	details, _ := json.Marshal(map[string]any{"uri": uri, "contents": len(res.Contents)})
	return agent.Result{Text: formatContents(res.Contents, resultLimit), Details: details}, nil
}

// formatResourceList is the reader's answer without a URI.
func formatResourceList(server string, list []ResourceInfo) string {
	if len(list) == 0 {
		return fmt.Sprintf("Server %q lists no resources.", server)
	}
	w := procio.New(resultLimit, resultLimit)
	for i, r := range list {
		if i > 0 {
			w.WriteString("\n")
		}
		w.WriteString(r.URI)
		var parts []string
		if r.Name != "" {
			parts = append(parts, r.Name)
		}
		if r.MIMEType != "" {
			parts = append(parts, r.MIMEType)
		}
		if r.Size > 0 {
			parts = append(parts, fmt.Sprintf("%d bytes", r.Size))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		}
		if r.Description != "" {
			w.WriteString(": " + strings.Join(strings.Fields(r.Description), " "))
		}
	}
	if len(list) >= maxResourceList {
		fmt.Fprintf(w, "\n[bench: the first %d resources]", maxResourceList)
	}
	text, _, cut := w.Parts()
	if cut > 0 {
		text += fmt.Sprintf("\n[bench: list cut: showing the first %d of %d bytes]", len(text), w.Len())
	}
	return text
}

// formatContents is what the model reads of a resource: each content's
// text; a binary content of a text type (text/*, JSON, XML, YAML,
// JavaScript...) decoded as text, any other summarised; cut at limit.
func formatContents(contents []*sdk.ResourceContents, limit int) string {
	w := procio.New(limit, limit)
	for i, r := range contents {
		if r == nil {
			continue
		}
		if i > 0 || len(contents) > 1 {
			if i > 0 {
				w.WriteString("\n")
			}
			fmt.Fprintf(w, "[resource %s (%s)]\n", r.URI, orDefault(r.MIMEType, "text"))
		}
		switch {
		case r.Blob == nil:
			w.WriteString(r.Text)
		case textType(r.MIMEType):
			w.Write(r.Blob)
		default:
			fmt.Fprintf(w, "[%s, %d bytes of binary content]", orDefault(r.MIMEType, "application/octet-stream"), len(r.Blob))
		}
	}
	if w.Len() == 0 {
		return "(the resource is empty)"
	}
	text, _, cut := w.Parts()
	if cut > 0 {
		text += fmt.Sprintf("\n[bench: resource cut: showing the first %d of %d bytes]", len(text), w.Len())
	}
	return text
}

// textType reports whether a MIME type is text the model can read.
func textType(mt string) bool {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	if strings.HasPrefix(t, "text/") {
		return true
	}
	switch t {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/javascript",
		"application/toml", "application/x-sh", "application/sql", "application/graphql", "image/svg+xml":
		return true
	}
	return strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml")
}
