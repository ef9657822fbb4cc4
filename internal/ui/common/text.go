package common

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize/english"
)

// Truncate shortens s, which may hold escape sequences, with "…" so that it
// takes at most w cells.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// Count is n and the noun, plural when n is not 1: "1 booking row", "2
// booking rows", "3 tries".
func Count(n int, noun string) string { return english.Plural(n, noun, "") }

// Ellipsis ends a progress line with one "…".
func Ellipsis(s string) string { return strings.TrimRight(s, ".…") + "…" }

// Hang writes text after prefix, wrapped to w cells, its further lines
// indented under the text: a choice is never cut short.
func Hang(prefix, text string, w int) string {
	pw := ansi.StringWidth(prefix)
	return hang(prefix, lipgloss.NewStyle().Width(max(10, w-pw)).Render(text))
}

// HangWords is Hang breaking lines at spaces only, never inside a word: a
// design's settings ("on-40001=answer-500") stay whole on their line
// unless one is wider than the line.
func HangWords(prefix, text string, w int) string {
	pw := ansi.StringWidth(prefix)
	// ansi.Wrap breaks after every hyphen: a non-breaking hyphen (U+2011,
	// as wide) holds each word whole while the lines are made.
	const nb = "\u2011"
	return strings.ReplaceAll(hang(prefix, ansi.Wrap(strings.ReplaceAll(text, "-", nb), max(10, w-pw), "")), nb, "-")
}

// hang puts prefix before the first of wrapped's lines and as many spaces
// before each other, each without its trailing spaces.
func hang(prefix, wrapped string) string {
	lines := strings.Split(wrapped, "\n")
	indent := strings.Repeat(" ", ansi.StringWidth(prefix))
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = indent + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
