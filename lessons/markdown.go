package lessons

import (
	"regexp"
	"strings"
	"unicode"
)

// This file holds the small line-based Markdown reader the page parser is
// built on. It understands only what pages use: fenced code, "#" headings,
// ordered lists, pipe tables and blockquotes.

// span is a half-open range [start, end) of lines.
type span struct{ start, end int }

// Fence is one fenced code block: the lines of its opening and closing
// fences (Close is -1 when the block is never closed) and its info string's
// first word ("mermaid", "sql").
type Fence struct {
	Open, Close int
	Info        string
}

// Fences finds the fenced code blocks of lines as CommonMark does (``` or
// ~~~, at most three spaces of indentation, closed by a fence of the same
// character at least as long) and reports, for each line, whether it is a
// fence line or lies inside one. An unclosed fence runs to the end. It is
// the one reading of fences: the page parser and the renderer both use it,
// so a page cannot be read two ways.
func Fences(lines []string) (mask []bool, blocks []Fence) {
	mask = make([]bool, len(lines))
	var marker string // the opening fence while inside one
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		indent := len(l) - len(t)
		if marker != "" {
			mask[i] = true
			if indent <= 3 && strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]+" \t") == "" {
				marker = ""
				blocks[len(blocks)-1].Close = i
			}
			continue
		}
		if indent > 3 {
			continue
		}
		for _, c := range []string{"`", "~"} {
			if n := len(t) - len(strings.TrimLeft(t, c)); n >= 3 {
				marker = strings.Repeat(c, n)
				mask[i] = true
				info := ""
				if f := strings.Fields(t[n:]); len(f) > 0 {
					info = f[0]
				}
				blocks = append(blocks, Fence{Open: i, Close: -1, Info: info})
				break
			}
		}
	}
	return mask, blocks
}

// heading returns the text of an ATX heading of exactly the given level
// ("## Title" for level 2), and whether line is one.
func heading(line string, level int) (string, bool) {
	prefix := strings.Repeat("#", level)
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, prefix) {
		return "", false
	}
	rest := t[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "###" is not a level-2 heading; "##x" is no heading
	}
	rest = strings.TrimSpace(rest)
	// An optional closing sequence of #s, as in "## Title ##".
	if trimmed := strings.TrimRight(rest, "#"); trimmed != rest && (trimmed == "" || strings.HasSuffix(trimmed, " ")) {
		rest = strings.TrimSpace(trimmed)
	}
	return rest, true
}

// headings returns the lines within s that are headings of the given level,
// outside fenced code, with their text.
func headings(lines []string, mask []bool, s span, level int) (at []int, titles []string) {
	for i := s.start; i < s.end; i++ {
		if mask[i] {
			continue
		}
		if t, ok := heading(lines[i], level); ok {
			at = append(at, i)
			titles = append(titles, t)
		}
	}
	return at, titles
}

// trimBlank narrows s so that it neither starts nor ends with blank lines.
func trimBlank(lines []string, s span) span {
	for s.start < s.end && strings.TrimSpace(lines[s.start]) == "" {
		s.start++
	}
	for s.end > s.start && strings.TrimSpace(lines[s.end-1]) == "" {
		s.end--
	}
	return s
}

// join returns the lines of s, blank lines trimmed at both ends, as one string.
func join(lines []string, s span) string {
	s = trimBlank(lines, s)
	return strings.Join(lines[s.start:s.end], "\n")
}

// anchor turns a heading into a GitHub-style anchor: lower case, letters,
// digits, '-' and '_' kept, spaces become '-', everything else dropped.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var orderedItem = regexp.MustCompile(`^ {0,3}(\d{1,9})[.)](?:[ \t]+(.*))?$`)

// orderedList returns the items of the ordered lists in s, in order. An
// item's continuation lines (indented, or directly following it) are joined
// to it with a space; a blank line followed by unindented text ends the list.
func orderedList(lines []string, mask []bool, s span) []string {
	var items []string
	in := false    // inside a list item
	blank := false // the previous line was blank
	for i := s.start; i < s.end; i++ {
		l := lines[i]
		if mask[i] {
			in = false
			continue
		}
		if m := orderedItem.FindStringSubmatch(l); m != nil {
			items = append(items, strings.TrimSpace(m[2]))
			in, blank = true, false
			continue
		}
		if strings.TrimSpace(l) == "" {
			blank = true
			continue
		}
		indented := strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")
		if in && (indented || !blank) {
			last := &items[len(items)-1]
			*last = strings.TrimSpace(*last + " " + strings.TrimSpace(l))
		} else {
			in = false
		}
		blank = false
	}
	return items
}

// blockquote returns the text of the blockquotes in s with the "> " markers
// removed: lines of one paragraph joined by a space, paragraphs separated by
// a blank line.
func blockquote(lines []string, mask []bool, s span) string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for i := s.start; i < s.end; i++ {
		t := strings.TrimSpace(lines[i])
		if mask[i] || !strings.HasPrefix(t, ">") {
			flush()
			continue
		}
		t = strings.TrimSpace(strings.TrimPrefix(t, ">"))
		if t == "" {
			flush()
			continue
		}
		cur = append(cur, t)
	}
	flush()
	return strings.Join(paras, "\n\n")
}

var (
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdStrong   = regexp.MustCompile(`(\*\*|__)(.+?)(\*\*|__)`)
	mdEmphasis = regexp.MustCompile(`(^|[^\w*])\*([^*\s](?:[^*]*[^*\s])?)\*`)
	mdSpaces   = regexp.MustCompile(`[ \t]+`)
	mdEscape   = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
)

// plainText removes inline Markdown markup from s: links keep their text,
// code spans their content, emphasis its words. Underscores inside words
// (user_id) are kept.
func plainText(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = strings.ReplaceAll(s, "`", "")
	s = mdStrong.ReplaceAllString(s, "$2")
	s = mdEmphasis.ReplaceAllString(s, "$1$2")
	s = mdEscape.ReplaceAllString(s, "$1")
	return strings.TrimSpace(mdSpaces.ReplaceAllString(s, " "))
}
