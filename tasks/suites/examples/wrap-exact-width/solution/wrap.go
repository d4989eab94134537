// Package textwrap breaks plain ASCII text into lines of bounded width.
package textwrap

import "strings"

// Wrap breaks s into lines of at most width characters, breaking only at
// whitespace. Runs of whitespace between words collapse to one space. A word
// longer than width is put on a line of its own, unbroken. Wrap returns no
// lines for a string with no words.
func Wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Fill wraps s like Wrap and joins the lines with newlines.
func Fill(s string, width int) string {
	return strings.Join(Wrap(s, width), "\n")
}

// Indent wraps s so that every line, prefix included, fits in width, and
// starts each line with prefix.
func Indent(s, prefix string, width int) string {
	lines := Wrap(s, width-len(prefix))
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
