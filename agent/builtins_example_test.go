package agent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/benchhq/bench/agent"
)

// Builtins gives the six tools of the harness, confined to one workspace; a
// Registry offers them to the model and checks the arguments of each call.
func ExampleBuiltins() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first\nsecond\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		log.Fatal(err)
	}
	reg := agent.NewRegistry()
	for _, t := range agent.Builtins(ws, agent.BuiltinOptions{}) {
		if err := reg.Add(t); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(reg.Names())

	args := map[string]any{"path": "notes.txt"}
	if err := reg.Validate("read_file", args); err != nil {
		log.Fatal(err)
	}
	tool, _ := reg.Lookup("read_file")
	res, err := tool.Call(context.Background(), args)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text)

	// A path out of the workspace is refused with an observation for the model.
	res, _ = tool.Call(context.Background(), map[string]any{"path": "../secrets.txt"})
	fmt.Println(res.IsError, res.Text)
	// Output:
	// [edit_file list_dir read_file run_command search write_file]
	//      1	first
	//      2	second
	// true path ../secrets.txt is outside the workspace: only files under the workspace can be used
}
