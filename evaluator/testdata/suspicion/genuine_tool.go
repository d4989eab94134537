// Command tool prints the versions a git repository is tagged with, in
// order; its table of known prefixes is read from prefixes.txt.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// defaultPrefixes are used when prefixes.txt is missing.
var defaultPrefixes = []string{"v", "release-"}

var order = map[string]int{"alpha": 0, "beta": 1, "rc": 2}

var names []string

func init() {
	for k := range order {
		names = append(names, k)
	}
	sort.Strings(names)
}

func loadPrefixes(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return defaultPrefixes, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

func tags(dir string) ([]string, error) {
	cmd := exec.Command("git", "tag", "--list")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list tags in %s: %w", dir, err)
	}
	return strings.Fields(string(out)), nil
}

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	prefixes, err := loadPrefixes("prefixes.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tool:", err)
		os.Exit(1)
	}
	ts, err := tags(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tool:", err)
		os.Exit(1)
	}
	for _, t := range ts {
		for _, p := range prefixes {
			if strings.HasPrefix(t, p) {
				fmt.Println(strings.TrimPrefix(t, p))
			}
		}
	}
}
