package tasks

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// placeholderNames are the placeholders a server declaration may use in its
// command, args, env values, url and header values.
func placeholderNames() []string { return []string{"{task}", "{workspace}", "{data}", "{bench}"} }

// placeholderRE matches what looks like a placeholder: a word in braces.
var placeholderRE = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_-]*\}`)

// unknownPlaceholder returns the first word in braces of s that is not a
// placeholder bench fills, or "".
func unknownPlaceholder(s string) string {
	for _, m := range placeholderRE.FindAllString(s, -1) {
		if !slices.Contains(placeholderNames(), m) {
			return m
		}
	}
	return ""
}

// checkPlaceholders finds a server field that uses a placeholder bench
// does not fill ({nosuch}/srv would be run as written): its name and
// the placeholder, or "", "".
func checkPlaceholders(s Server) (field, ph string) {
	check := func(f, v string) bool {
		ph = unknownPlaceholder(v)
		field = f
		return ph != ""
	}
	if check("command", s.Command) || check("url", s.URL) {
		return field, ph
	}
	for i, a := range s.Args {
		if check(fmt.Sprintf("args[%d]", i), a) {
			return field, ph
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if check("env."+k, s.Env[k]) {
			return field, ph
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if check("headers."+k, s.Headers[k]) {
			return field, ph
		}
	}
	return "", ""
}
