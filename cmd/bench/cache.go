package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchhq/bench/environment"
)

// cmdCache is `bench cache`: the tasks' prepared environments.
func cmdCache(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cache", stderr, `Usage: bench cache [list|clear|path] [flags]

The tasks' prepared environments (warm tool caches, the [environment]
setup step), kept between runs, one per task, task contents and toolchain:
  list    each environment, its size and how long its hidden tests take warm (default)
  clear   remove them (all, or --task ID's) but those a running bench uses,
          and cut preparations
  path    print the cache folder

Flags:
`)
	dir := fs.String("cache", "", "`folder` of the environments (default $BENCH_CACHE/envs or ~/.cache/bench/envs)")
	task := fs.String("task", "", "clear: only the environments of this task `id`")
	verb := "list"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		verb, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("cache: unexpected argument %q", fs.Arg(0))
	}
	if *dir == "" {
		*dir = environment.DefaultDir()
	}
	switch verb {
	case "path":
		fmt.Fprintln(stdout, *dir)
		return nil
	case "list":
		if *task != "" {
			return usagef("cache list: --task is for clear")
		}
		if err := listCache(stdout, *dir); err != nil {
			return err
		}
		return listHarborCache(stdout, *dir)
	case "clear":
		var keep func(environment.Listed) bool
		if *task != "" {
			keep = func(l environment.Listed) bool { return l.Task == *task }
		}
		c, err := environment.Clear(*dir, keep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s (%s) from %s\n", count(c.Removed, "environment"), environment.SizeText(c.Freed), *dir)
		if len(c.InUse) > 0 {
			var ids []string
			for _, l := range c.InUse {
				ids = append(ids, l.Task)
			}
			fmt.Fprintf(stdout, "left %s in use by a running bench: %s\n", count(len(c.InUse), "environment"), strings.Join(ids, ", "))
		}
		return clearHarborCache(stdout, *dir, *task)
	}
	return usagef("cache: unknown action %q (expected list, clear or path)", verb)
}

// listCache prints the environments of a cache folder, with their sizes.
func listCache(w io.Writer, dir string) error {
	list, err := environment.List(dir)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(w, "no prepared environments in %s\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TASK\tSIZE\tFILES\tPREPARED\tTOOK\tTESTS WARM\t")
	var total int64
	for _, l := range list {
		total += l.Bytes
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t\n", l.Task, environment.SizeText(l.Bytes), l.Files,
			l.PreparedAt.Local().Format("2006-01-02 15:04"), l.Took.Round(100*time.Millisecond), l.RefTest.Round(time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s, %s in %s\n", count(len(list), "environment"), environment.SizeText(total), dir)
	return nil
}
