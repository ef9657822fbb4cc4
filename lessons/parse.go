package lessons

import (
	"fmt"
	"path"
	"strings"
)

// Section titles, as the page format fixes them per kind.
const (
	secPicture     = "Picture it"
	secBreakIt     = "Break it"
	secSayLesson   = "Say it in an interview"
	secFollowUps   = "Follow-ups"
	secCheckpoint  = "Checkpoint"
	secSayCard     = "Say it in 30 seconds"
	secCounterQs   = "Counter-questions"
	mermaidInfo    = "mermaid"
	frontMatterSep = "---"
)

// sectionOrder lists, per kind, the "## " sections a page must have, in order.
var sectionOrder = map[Kind][]string{
	KindLesson: {
		"In 1 minute", secPicture, "How it works", secBreakIt, secSayLesson,
		secFollowUps, "Advanced: where the logic lives", secCheckpoint,
		"Redraw it", "Try this",
	},
	KindInterview: {
		secSayCard, "The deeper answer", secCounterQs, "Where in learn",
	},
}

// breakItColumns are the header cells of a Break it table.
var breakItColumns = []string{"Symptom", "Cause", "Where to look"}

// parser carries one page being parsed.
type parser struct {
	file   string   // path in the embedded file system, for errors
	offset int      // file lines before lines[0] (the front matter)
	lines  []string // Page.Markdown split into lines
	mask   []bool   // fence lines and fenced code, from Fences(lines)
	blocks []Fence  // the fenced code blocks
	spans  []span   // body of each section, parallel to Page.Sections
}

// errAt returns a ParseError at a 0-based line of Page.Markdown; line < 0
// means the whole page.
func (ps *parser) errAt(line int, format string, args ...any) error {
	n := 0
	if line >= 0 {
		n = line + ps.offset + 1
	}
	return &ParseError{File: ps.file, Line: n, Msg: fmt.Sprintf(format, args...)}
}

// parsePage parses one page file. file is its path in the embedded file
// system ("pages/idempotency.md"); the slug must equal its base name.
func parsePage(file string, src []byte) (*Page, error) {
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	ps := &parser{file: file}
	p := &Page{}

	body, err := ps.frontMatter(text, p)
	if err != nil {
		return nil, err
	}
	if want := strings.TrimSuffix(path.Base(file), ".md"); p.Slug != want {
		return nil, &ParseError{File: file, Line: 1, Msg: fmt.Sprintf("front matter slug %q does not match the file name; use slug: %s", p.Slug, want)}
	}
	p.Markdown = body
	ps.lines = strings.Split(body, "\n")
	ps.mask, ps.blocks = Fences(ps.lines)

	steps := []func(*Page) error{
		ps.title, ps.closedFences, ps.sections, ps.checkSectionOrder, ps.sequence,
		ps.checkpoint, ps.breakIt, ps.followUps, ps.spokenAnswer,
	}
	for _, step := range steps {
		if err := step(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// frontMatter reads the leading "---" block into p and returns the rest of
// the text with its leading blank lines removed. It sets ps.offset.
func (ps *parser) frontMatter(text string, p *Page) (string, error) {
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != frontMatterSep {
		return "", &ParseError{File: ps.file, Line: 1, Msg: "page must start with a front-matter block: ---, slug: …, kind: lesson|interview, ---"}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == frontMatterSep {
			end = i
			break
		}
		if l == "" {
			continue
		}
		key, value, ok := strings.Cut(l, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || value == "" {
			return "", &ParseError{File: ps.file, Line: i + 1, Msg: fmt.Sprintf("front matter line %q is not \"key: value\" (is the closing --- missing?)", l)}
		}
		switch key {
		case "slug":
			p.Slug = value
		case "kind":
			p.Kind = Kind(value)
			if _, known := sectionOrder[p.Kind]; !known {
				return "", &ParseError{File: ps.file, Line: i + 1, Msg: fmt.Sprintf("kind %q is unknown; use lesson or interview", value)}
			}
		default:
			return "", &ParseError{File: ps.file, Line: i + 1, Msg: fmt.Sprintf("front matter key %q is unknown; the keys are slug and kind (the title is the # heading)", key)}
		}
	}
	if end < 0 {
		return "", &ParseError{File: ps.file, Line: 1, Msg: "front matter is not closed by a --- line"}
	}
	if p.Slug == "" || p.Kind == "" {
		return "", &ParseError{File: ps.file, Line: 1, Msg: "front matter needs both slug and kind"}
	}
	rest := lines[end+1:]
	skipped := 0
	for skipped < len(rest) && strings.TrimSpace(rest[skipped]) == "" {
		skipped++
	}
	ps.offset = end + 1 + skipped
	return strings.Join(rest[skipped:], "\n"), nil
}

// title reads the "# " heading that must open the page.
func (ps *parser) title(p *Page) error {
	t, ok := heading(ps.lines[0], 1)
	if !ok || t == "" || ps.mask[0] {
		return ps.errAt(0, "page must start with a \"# Title\" line after the front matter")
	}
	p.Title = t
	return nil
}

// closedFences checks that every fenced code block is closed: an open fence
// would swallow the rest of the page, headings included.
func (ps *parser) closedFences(*Page) error {
	for _, b := range ps.blocks {
		if b.Close < 0 {
			return ps.errAt(b.Open, "code fence is never closed; end the block with a matching fence line")
		}
	}
	return nil
}

// sections splits the page at its "## " headings.
func (ps *parser) sections(p *Page) error {
	at, titles := headings(ps.lines, ps.mask, span{1, len(ps.lines)}, 2)
	used := map[string]int{}
	for k, line := range at {
		end := len(ps.lines)
		if k+1 < len(at) {
			end = at[k+1]
		}
		if titles[k] == "" {
			return ps.errAt(line, "empty \"##\" heading")
		}
		a := anchor(titles[k])
		if n := used[a]; n > 0 {
			used[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			used[a] = 1
		}
		s := span{line + 1, end}
		ps.spans = append(ps.spans, s)
		p.Sections = append(p.Sections, Section{
			Title:    titles[k],
			Anchor:   a,
			Markdown: join(ps.lines, s),
			Line:     line,
		})
	}
	return nil
}

// checkSectionOrder checks that the sections are exactly those of the kind,
// in order, and that none is empty.
func (ps *parser) checkSectionOrder(p *Page) error {
	want := sectionOrder[p.Kind]
	for i, w := range want {
		if i >= len(p.Sections) {
			return ps.errAt(-1, "section %q is missing; a %s has the sections %s", w, p.Kind, strings.Join(want, ", "))
		}
		if got := p.Sections[i]; got.Title != w {
			return ps.errAt(got.Line, "section %d is %q, want %q; a %s has the sections %s", i+1, got.Title, w, p.Kind, strings.Join(want, ", "))
		}
	}
	if len(p.Sections) > len(want) {
		extra := p.Sections[len(want)]
		return ps.errAt(extra.Line, "unexpected section %q after %q; use a ### subsection instead", extra.Title, want[len(want)-1])
	}
	for _, s := range p.Sections {
		if s.Markdown == "" {
			return ps.errAt(s.Line, "section %q is empty", s.Title)
		}
	}
	return nil
}

// spanOf returns the body of the section with the given title.
func (ps *parser) spanOf(p *Page, title string) (span, bool) {
	for i, s := range p.Sections {
		if s.Title == title {
			return ps.spans[i], true
		}
	}
	return span{}, false
}

// sequence parses the first ```mermaid block of the page, if any. A lesson
// must have one, in Picture it.
func (ps *parser) sequence(p *Page) error {
	for _, b := range ps.blocks {
		if b.Info != mermaidInfo {
			continue
		}
		seq, err := parseSequence(ps.lines[b.Open+1 : b.Close])
		if err != nil {
			return ps.errAt(b.Open+1+err.line, "%s", err.msg)
		}
		p.Sequence = seq
		if p.Kind == KindLesson {
			if s, _ := ps.spanOf(p, secPicture); b.Open < s.start || b.Open >= s.end {
				return ps.errAt(b.Open, "the sequence diagram belongs in %q", secPicture)
			}
		}
		return nil
	}
	if p.Kind == KindLesson {
		return ps.errAt(-1, "a lesson needs a ```mermaid sequenceDiagram block in %q", secPicture)
	}
	return nil
}

// checkpoint reads the Checkpoint questions (lesson only).
func (ps *parser) checkpoint(p *Page) error {
	s, ok := ps.spanOf(p, secCheckpoint)
	if !ok {
		return nil
	}
	p.Checkpoint = orderedList(ps.lines, ps.mask, s)
	if len(p.Checkpoint) == 0 {
		return ps.errAt(s.start-1, "%q has no questions; write them as an ordered list (1. …)", secCheckpoint)
	}
	for _, q := range p.Checkpoint {
		if q == "" {
			return ps.errAt(s.start-1, "%q has an empty question", secCheckpoint)
		}
	}
	return nil
}

// breakIt reads the Break it table (lesson only).
func (ps *parser) breakIt(p *Page) error {
	s, ok := ps.spanOf(p, secBreakIt)
	if !ok {
		return nil
	}
	rows, found, terr := readTable(ps.lines, ps.mask, s, breakItColumns)
	if terr != nil {
		return ps.errAt(terr.line, "%s", terr.msg)
	}
	if !found || len(rows) == 0 {
		return ps.errAt(s.start-1, "%q needs a table with the columns %s and at least one row", secBreakIt, strings.Join(breakItColumns, " | "))
	}
	for _, r := range rows {
		p.BreakIt = append(p.BreakIt, BreakRow{Symptom: r[0], Cause: r[1], WhereToLook: r[2]})
	}
	return nil
}

// followUps reads the "### " questions of Follow-ups (lesson) or
// Counter-questions (interview) with their answers.
func (ps *parser) followUps(p *Page) error {
	title := secFollowUps
	if p.Kind == KindInterview {
		title = secCounterQs
	}
	s, _ := ps.spanOf(p, title)
	at, questions := headings(ps.lines, ps.mask, s, 3)
	if len(at) == 0 {
		return ps.errAt(s.start-1, "%q has no questions; write each as a \"### \" heading followed by its answer", title)
	}
	for k, line := range at {
		end := s.end
		if k+1 < len(at) {
			end = at[k+1]
		}
		answer := join(ps.lines, span{line + 1, end})
		if questions[k] == "" || answer == "" {
			return ps.errAt(line, "follow-up %d needs both a question heading and an answer", k+1)
		}
		p.FollowUps = append(p.FollowUps, FollowUp{Question: questions[k], Answer: answer})
	}
	return nil
}

// spokenAnswer reads the blockquote of Say it in an interview (lesson) or
// Say it in 30 seconds (interview) as plain text.
func (ps *parser) spokenAnswer(p *Page) error {
	title := secSayLesson
	if p.Kind == KindInterview {
		title = secSayCard
	}
	s, _ := ps.spanOf(p, title)
	p.SpokenAnswer = plainText(blockquote(ps.lines, ps.mask, s))
	if p.SpokenAnswer == "" {
		return ps.errAt(s.start-1, "%q needs the spoken answer as a \"> \" blockquote", title)
	}
	return nil
}
