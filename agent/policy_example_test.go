package agent_test

import (
	"context"
	"fmt"

	"github.com/BurntSushi/toml"

	"github.com/benchhq/bench/agent"
)

// A profile from a run file, and what it says of a few calls.
func ExampleParseProfiles() {
	const runFile = `
[profiles.careful]
extends = "standard"          # read, write, exec allowed; network denied
search = "allow"              # a class the operator gave a foreign tool
allow_commands = ["go test"]  # run_command only for these prefixes
deny_write = ["tests/**"]     # write_file and edit_file never here
`
	var doc map[string]any
	if _, err := toml.Decode(runFile, &doc); err != nil {
		panic(err)
	}
	profiles, err := agent.ParseProfiles("run.toml", doc["profiles"].(map[string]any))
	if err != nil {
		panic(err)
	}
	prof, _ := profiles.Lookup("careful")
	policy := &agent.ProfilePolicy{Profile: prof}
	for _, c := range []agent.Call{
		{Tool: "run_command", Class: agent.ClassExec, Origin: agent.OriginBuiltin, Args: map[string]any{"command": "go test ./..."}},
		{Tool: "run_command", Class: agent.ClassExec, Origin: agent.OriginBuiltin, Args: map[string]any{"command": "curl example.com"}},
		{Tool: "write_file", Class: agent.ClassWrite, Origin: agent.OriginBuiltin, Args: map[string]any{"path": "tests/test_app.py"}},
		{Tool: "docs__search", Class: "search", Origin: "mcp:docs"},
		{Tool: "web__fetch", Class: agent.ClassNetwork, Origin: "mcp:web"},
	} {
		v := policy.Decide(context.Background(), c)
		fmt.Printf("%-12s %-5s %s\n", c.Tool, v.Decision, v.Rule)
	}
	// Output:
	// run_command  allow class exec
	// run_command  deny  allow_commands
	// write_file   deny  deny_write "tests/**"
	// docs__search allow class search
	// web__fetch   deny  class network
}

// An arm that asks: the profile says ask for commands, and an approver
// answers. Here it allows everything; an approver command or a person at
// the terminal could judge each call.
func ExampleProfilePolicy() {
	policy := &agent.ProfilePolicy{
		Profile:  agent.BuiltinProfiles()[agent.ProfileAskExec],
		Approver: agent.AllowApprover{},
	}
	v := policy.Decide(context.Background(), agent.Call{
		Tool: "run_command", Class: agent.ClassExec, Origin: agent.OriginBuiltin,
		Args: map[string]any{"command": "make"},
	})
	fmt.Println(v.Decision, "by rule", v.Rule, "answered by", v.Approver)
	// Output:
	// allow by rule class exec answered by allow
}
