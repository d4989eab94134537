package overhead_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/overhead"
)

// Measure what the built-in tools cost a model, then show it as a table and
// as terminal bars. Here the model is the tests' fake Ollama server, whose
// tokenizer counts words; against a real server, pass agent.NewOllama("", nil).
func Example() {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "overhead")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		log.Fatal(err)
	}
	sets := []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: agent.Builtins(ws, agent.BuiltinOptions{})}}

	r, err := overhead.Measure(context.Background(), model, "qwen3:0.6b", map[string]any{"num_ctx": 8192}, 0, sets)
	if err != nil {
		log.Fatal(err)
	}
	r.Arm = "default"
	for _, w := range r.Warnings() {
		fmt.Println("warning:", w)
	}
	view := overhead.View{Turns: 10, TurnsFrom: "estimate", Width: 30}
	if err := overhead.WriteTable(os.Stdout, r, view); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	if err := overhead.WriteBars(os.Stdout, r, view); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	if err := overhead.WriteLegend(os.Stdout, view); err != nil {
		log.Fatal(err)
	}
	// Output:
	// arm default: model qwen3:0.6b, num_ctx 8,192
	// no tools (baseline): 5 prompt tokens; 8 requests sent
	//
	// TOOLS              TOKENS  NUM_CTX  PER ATTEMPT  ONE BY ONE  FRAMING
	// builtin (6 tools)     551     6.7%        5,510         551        0
	//   search              115     1.4%        1,150
	//   run_command         105     1.3%        1,050
	//   read_file            97     1.2%          970
	//   edit_file            97     1.2%          970
	//   list_dir             71     0.9%          710
	//   write_file           66     0.8%          660
	//
	// builtin (6 tools)  ██████████████████████████████  551  6.7%
	//   search           ██████▎                         115  1.4%
	//   run_command      █████▊                          105  1.3%
	//   read_file        █████▎                           97  1.2%
	//   edit_file        █████▎                           97  1.2%
	//   list_dir         ███▉                             71  0.9%
	//   write_file       ███▋                             66  0.8%
	//
	// TOKENS       prompt tokens every request carries for the tools: the prompt offering
	//              them minus the same prompt with no tools
	// NUM_CTX      their share of the context window (num_ctx, or the model's own
	//              context length when it is smaller: Ollama lowers num_ctx to it)
	// PER ATTEMPT  TOKENS × 10 turns (estimate): each turn sends them again
	// ONE BY ONE   the TOKENS of the set's tools added up, each tool measured alone
	// FRAMING      TOKENS minus ONE BY ONE: what the template adds or saves by offering them together
}
