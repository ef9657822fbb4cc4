// Package markdown renders the lesson pages for the terminal with Glamour:
// the style chosen without asking the terminal, the Mermaid sequence drawn
// as lanes and arrows (package seqdiag), inline code never split across
// lines (in tables too: a table too narrow for its words becomes a list),
// and a plain-text form for a standard output that is not a terminal.
package markdown

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"charm.land/glamour/v2"
	gstyles "charm.land/glamour/v2/styles"

	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/lessons"
)

// Style picks the Markdown style without asking the terminal:
// GLAMOUR_STYLE when set (a standard style name or a JSON file), "notty"
// (no escapes) when plain is true or NO_COLOR is set, else the theme, which
// is "dark" unless --theme light.
func Style(theme string, plain bool) string { return StyleIn(theme, plain, os.Getenv) }

// StyleIn is Style in an environment of its own, such as an SSH session's
// (getenv looks a variable up in it): the session's NO_COLOR and
// GLAMOUR_STYLE count, never the server's.
func StyleIn(theme string, plain bool, getenv func(string) string) string {
	switch {
	case plain:
		return "notty"
	case getenv("GLAMOUR_STYLE") != "":
		return getenv("GLAMOUR_STYLE")
	case getenv("NO_COLOR") != "":
		return "notty"
	case theme == "light":
		return "light"
	}
	return "dark"
}

// replaceSequence puts diagram, as a text block, in place of md's first
// mermaid block (the one the page parser reads as the sequence), with a
// fence longer than any run of backticks in the diagram.
func replaceSequence(md, diagram string) string {
	lines := strings.Split(md, "\n")
	_, blocks := lessons.Fences(lines)
	for _, b := range blocks {
		if b.Info != "mermaid" {
			continue
		}
		end := b.Close
		if end < 0 {
			end = len(lines) - 1
		}
		fence := "```"
		for strings.Contains(diagram, fence) {
			fence += "`"
		}
		text := []string{fence + "text", diagram, fence}
		return strings.Join(slices.Concat(lines[:b.Open], text, lines[end+1:]), "\n")
	}
	return md
}

// codeBlockInset is how many cells Glamour's code block takes from the wrap
// width (its indent and the document margins).
const codeBlockInset = 6

// Render renders a page's Markdown with Glamour, wrapped at width cells,
// with its Mermaid sequence diagram drawn as lanes and arrows. It builds a
// renderer each call: callers cache the result per (page, width, style).
func Render(p *lessons.Page, width int, style string) (string, error) {
	return renderMarkdown(p, p.Markdown, width, style)
}

// Body renders a page without its "# Title" line, for the reader,
// whose header already names the page.
func Body(p *lessons.Page, width int, style string) (string, error) {
	md := p.Markdown
	if first, rest, ok := strings.Cut(md, "\n"); ok && strings.HasPrefix(first, "# ") {
		md = rest
	}
	return renderMarkdown(p, md, width, style)
}

// Head renders the top of a page as Body does, enough of it to fill at
// least rows lines: its first rows lines (or the whole page, when shorter)
// are those of Body. It renders whole top-level blocks only, doubling
// their number until the lines are there, so the cost follows rows, not
// the page's length: the first frame needs one screen, at once.
func Head(p *lessons.Page, width int, style string, rows int) (string, error) {
	md := p.Markdown
	if first, rest, ok := strings.Cut(md, "\n"); ok && strings.HasPrefix(first, "# ") {
		md = rest
	}
	blocks := topBlocks(md)
	for n := min(len(blocks), 4); ; n = min(len(blocks), 2*n) {
		out, err := renderPart(p, strings.Join(blocks[:n], "\n"), width, style)
		if err != nil || n == len(blocks) || strings.Count(out, "\n") > rows+headMargin {
			return out, err
		}
	}
}

// renderPart renders the part of a page Head tries; a test that asks
// for many heads of one page sets a memo of renderMarkdown here.
var renderPart = renderMarkdown

// headMargin is the lines Head renders past rows: the last lines of a
// part of a page are Glamour's closing margin, not what follows them.
const headMargin = 4

// topBlocks cuts md into its top-level blocks, each with the blank lines
// that follow it: a cut is made only at a blank line outside a fenced
// block. Joined with newlines, the blocks are md again.
func topBlocks(md string) []string {
	lines := strings.Split(md, "\n")
	fenced, _ := lessons.Fences(lines)
	var blocks []string
	start := 0
	for i, l := range lines {
		next := i + 1
		if !fenced[i] && strings.TrimSpace(l) == "" && (next == len(lines) || strings.TrimSpace(lines[next]) != "") {
			blocks = append(blocks, strings.Join(lines[start:next], "\n"))
			start = next
		}
	}
	if start < len(lines) {
		blocks = append(blocks, strings.Join(lines[start:], "\n"))
	}
	return blocks
}

func renderMarkdown(p *lessons.Page, md string, width int, style string) (string, error) {
	if p.Sequence != nil {
		diagram := drawLessonSequence(p.Sequence, width-codeBlockInset)
		md = replaceSequence(md, diagram)
	}
	r, err := glamour.NewTermRenderer(styleOption(style), glamour.WithWordWrap(width))
	if err != nil {
		return "", fmt.Errorf("markdown style %q: %w (set GLAMOUR_STYLE to dark, light, notty or a style file)", style, err)
	}
	md, err = fitTables(r, keepCodeWhole(md))
	if err != nil {
		return "", fmt.Errorf("render %s: %w", p.Slug, err)
	}
	out, err := r.Render(md)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", p.Slug, err)
	}
	return restoreCode(out), nil
}

// styleOption picks a Glamour style by name or file. Glamour's standard
// styles indent a blockquote by one cell but draw a two-cell bar, so long
// quotes wrap one word too late and leave it on a line of its own; learn
// draws quotes as an italic block indented by two spaces instead.
func styleOption(style string) glamour.TermRendererOption {
	base, ok := gstyles.DefaultStyles[style]
	if !ok {
		return glamour.WithStylePath(style)
	}
	cfg := *base
	indent, token := uint(2), " "
	cfg.BlockQuote.Indent, cfg.BlockQuote.IndentToken = &indent, &token
	if style != "notty" { // notty means no escape sequence at all
		italic := true
		cfg.BlockQuote.Italic = &italic
	} else {
		// Without colour, the padding that makes inline code a chip is
		// only stray spaces: "locked with  SELECT … FOR UPDATE , the".
		empty := ""
		cfg.Code.Prefix, cfg.Code.Suffix = empty, empty
	}
	return glamour.WithStyles(cfg)
}

// Inside inline code, every character Glamour may wrap at becomes a
// stand-in of the same width that it does not wrap at, so a name or a
// command is never split across lines; they are put back after. Paragraphs
// wrap at spaces and hyphens; list items also at ".,;+" (Glamour's block
// breakpoints), which split `sim/client/client.go` and `UNIQUE (user_id,
// idempotency_key)` in the middle.
var codeStandIns = []string{
	" ", "\u00a0", // no-break space
	"-", "\u2011", // non-breaking hyphen
	".", "\u2024", // one dot leader
	",", "\u201a", // single low-9 quotation mark
	";", "\u037e", // Greek question mark
	"+", "\u02d6", // modifier letter plus sign
}

var (
	keepCode    = strings.NewReplacer(codeStandIns...)
	restoreCode = strings.NewReplacer(reversed(codeStandIns)...).Replace
)

// reversed swaps each pair of old, new.
func reversed(pairs []string) []string {
	out := make([]string, len(pairs))
	for i := 0; i+1 < len(pairs); i += 2 {
		out[i], out[i+1] = pairs[i+1], pairs[i]
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`\n]+`")

func keepCodeWhole(md string) string {
	return inlineCode.ReplaceAllStringFunc(md, keepCode.Replace)
}

// drawLessonSequence draws the lesson's sequence diagram at width cells.
func drawLessonSequence(seq *lessons.Sequence, width int) string {
	lanes := make([]seqdiag.Lane, len(seq.Participants))
	for i, p := range seq.Participants {
		lanes[i] = seqdiag.Lane{ID: p.ID, Name: p.Name}
	}
	d := seqdiag.New(lanes, width)
	lines := []string{d.Header(), d.Rail()}
	for _, m := range seq.Messages {
		lines = append(lines, d.Arrow(seqdiag.Arrow{From: m.From, To: m.To, Label: m.Text, Dashed: m.Reply, Lost: m.Lost}), d.Rail())
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// Plain renders a page as text without any escape sequence, for a
// standard output that is not a terminal.
func Plain(p *lessons.Page, width int) (string, error) {
	out, err := Render(p, width, "notty")
	if err != nil {
		return "", err
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n")) + "\n", nil
}
