package tasks_test

import (
	"fmt"

	"github.com/benchhq/bench/tasks"
)

// A suite is a folder of task folders; loading it validates every task.
func ExampleLoadSuite() {
	suite, err := tasks.LoadSuite("suites/examples")
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := suite.Task("recipe-trailing-dot")
	fmt.Println(len(suite.Tasks) >= 8, t.Golden.Command, t.Golden.CompareOr(), t.Limits.MaxTurnsOr())
	// Output: true python3 observe.py json 20
}

// A bad task file is refused with the file, the field and what was expected.
func ExampleParse() {
	_, err := tasks.Parse("my-task/task.toml", []byte("format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\ntimeout = \"soon\"\n"))
	fmt.Println(err)
	// Output: my-task/task.toml: field tests.timeout: line 5: expected a duration such as "90s" or "5m", got "soon"
}
