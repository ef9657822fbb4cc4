package markdown

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
)

// Every rendered line fits the wrap width, in every style: Glamour's own
// blockquote overflows by a cell, which is why learn restyles quotes.
func TestRenderedPagesFitTheirWidth(t *testing.T) {
	for _, p := range lessons.All() {
		for _, style := range []string{"dark", "light", "notty"} {
			for _, w := range []int{58, 60, 78, 80, 98, 100} {
				out, err := Render(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				for i, line := range strings.Split(out, "\n") {
					if lw := ansi.StringWidth(line); lw > w {
						t.Errorf("%s %s at %d: line %d is %d wide: %q", p.Slug, style, w, i+1, lw, ansi.Strip(line))
					}
				}
			}
		}
	}
}

// The spoken answer is one quote block: every one of its lines carries the
// same indent (Glamour's own style dropped the bar from words that spilled).
func TestSpokenAnswerWrapsAsOneBlock(t *testing.T) {
	for _, p := range lessons.All() {
		first := strings.Fields(p.SpokenAnswer)[0]
		for _, style := range []string{"dark", "notty"} {
			for _, w := range []int{60, 70, 80, 90, 100} {
				out, err := Render(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(ansi.Strip(out), "\n")
				prefix := func(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " │|"))] }
				start := -1
				for i, l := range lines {
					if strings.HasPrefix(strings.TrimLeft(l, " │|"), first+" ") && i > 0 && strings.Contains(strings.Join(lines[max(0, i-3):i], " "), "seconds") {
						start = i
						break
					}
				}
				if start < 0 {
					t.Fatalf("%s %s %d: spoken answer not found", p.Slug, style, w)
				}
				want := prefix(lines[start])
				for i := start; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
					if got := prefix(lines[i]); got != want {
						t.Errorf("%s %s %d: quote line %q starts %q, not %q", p.Slug, style, w, lines[i], got, want)
					}
				}
			}
		}
	}
}

func TestCodeSpansSurviveRendering(t *testing.T) {
	md := "Run `learn demo concurrent-copies --copies 10` now."
	if got := restoreCode(keepCodeWhole(md)); got != md {
		t.Errorf("round trip = %q", got)
	}
	if strings.Contains(keepCodeWhole(md), "concurrent-copies") {
		t.Error("the hyphen inside code was left breakable")
	}
	if !strings.Contains(keepCodeWhole(md), "Run ") {
		t.Error("text outside code was changed")
	}
}

// codeSpans is the text of every inline code span of md outside fenced
// blocks, as a reader sees it.
func codeSpans(md string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, c := range inlineCode.FindAllString(l, -1) {
			out = append(out, strings.Trim(c, "`"))
		}
	}
	return out
}

// Inline code is never split across lines, in paragraphs, lists and table
// cells alike, at every width the reader uses (a 60-column window wraps at
// 58): each span of the source is found whole on one rendered line as many
// times as the source holds it. At 58 columns Glamour's table cut
// `Engine.BookTicket` into "Engine.BookTicke" and "t".
func TestInlineCodeIsNeverSplit(t *testing.T) {
	for _, p := range lessons.All() {
		need := map[string]int{}
		for _, c := range codeSpans(p.Markdown) {
			need[c]++
		}
		for _, style := range []string{"dark", "light", "notty"} {
			for _, w := range []int{58, 59, 60, 62, 66, 70, 78, 80, 90, 98, 100} {
				out, err := Render(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(ansi.Strip(out), "\n")
				for c, n := range need {
					have := 0
					for _, l := range lines {
						have += strings.Count(l, c)
					}
					if have < n {
						t.Errorf("%s %s at %d: `%s` is whole %d times of %d", p.Slug, style, w, c, have, n)
					}
				}
			}
		}
	}
}

// A table whose words all fit its columns stays a table; one whose columns
// would cut a word becomes a list, each cell after its column's name.
func TestNarrowTableBecomesAList(t *testing.T) {
	md := "| Symptom | Where to look |\n| --- | --- |\n| charged twice | `Engine.BookTicket` in `sim/engine/booking.go` |\n"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{100, "Symptom │ Where to look"},
		{30, "Where to look: Engine.BookTicket"},
	} {
		p := &lessons.Page{Slug: "t", Markdown: md}
		out, err := Render(p, tc.width, "dark")
		if err != nil {
			t.Fatal(err)
		}
		plain := strings.Join(strings.Fields(ansi.Strip(out)), " ")
		if want := strings.Join(strings.Fields(tc.want), " "); !strings.Contains(plain, want) {
			t.Errorf("at %d: %q not in\n%s", tc.width, want, ansi.Strip(out))
		}
	}
}

// The head of a page is the page's first lines, in every style, at every
// width and height a window may have; and it costs less than the page.
func TestHeadIsTheTopOfTheBody(t *testing.T) {
	// Head renders the same parts again for each number of rows (4
	// blocks, then 8, …): a rendering is a function of its inputs, so
	// each is made once here, and Head's choice of parts is what is
	// tested.
	type part struct {
		md          string
		width       int
		style, slug string
	}
	memo := map[part]string{}
	renderPart = func(p *lessons.Page, md string, width int, style string) (string, error) {
		k := part{md, width, style, p.Slug}
		if out, ok := memo[k]; ok {
			return out, nil
		}
		out, err := renderMarkdown(p, md, width, style)
		if err == nil {
			memo[k] = out
		}
		return out, err
	}
	t.Cleanup(func() { renderPart = renderMarkdown })
	for _, p := range lessons.All() {
		for _, style := range []string{"dark", "light", "notty"} {
			for _, w := range []int{20, 58, 78, 98, 118, 200} {
				body, err := Body(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				all := strings.Split(body, "\n")
				for _, rows := range []int{1, 10, 22, 28, 48, 200, 5000} {
					head, err := Head(p, w, style, rows)
					if err != nil {
						t.Fatal(err)
					}
					top := strings.Split(head, "\n")
					n := min(rows, len(all))
					if len(top) < n {
						t.Fatalf("%s %s %dx%d: the head has %d lines, want at least %d", p.Slug, style, w, rows, len(top), n)
					}
					for i := range n {
						if top[i] != all[i] {
							t.Fatalf("%s %s %dx%d: line %d is\n%q\nin the head, and in the page\n%q", p.Slug, style, w, rows, i+1, top[i], all[i])
						}
					}
					if rows == 22 && len(all) > 60 && len(top) >= len(all) {
						t.Errorf("%s %s at %d: the head of 22 rows is the whole page (%d lines)", p.Slug, style, w, len(all))
					}
				}
			}
		}
	}
}

// The blocks of a page joined are the page.
func TestTopBlocksJoinToThePage(t *testing.T) {
	for _, p := range lessons.All() {
		blocks := topBlocks(p.Markdown)
		if got := strings.Join(blocks, "\n"); got != p.Markdown {
			t.Errorf("%s: the blocks joined differ from the page", p.Slug)
		}
		if len(blocks) < 10 {
			t.Errorf("%s: only %d blocks", p.Slug, len(blocks))
		}
	}
}

// StyleIn reads its own environment: a session's NO_COLOR turns colour off
// whatever the server's environment says.
func TestStyleInReadsItsOwnEnvironment(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		theme string
		get   func(string) string
		want  string
	}{
		{"dark", env(), "dark"},
		{"light", env(), "light"},
		{"light", env("NO_COLOR", "1"), "notty"},
		{"dark", env("GLAMOUR_STYLE", "dracula", "NO_COLOR", "1"), "dracula"},
	} {
		if got := StyleIn(tc.theme, false, tc.get); got != tc.want {
			t.Errorf("StyleIn(%s) = %s, want %s", tc.theme, got, tc.want)
		}
	}
}

// The renderer reads fenced code as the page parser does (lessons.Fences:
// ``` or ~~~, a closing fence at least as long as the opening one): a
// table inside a fence is code, shown as written, and a page's top blocks
// are never cut inside a fence, whatever fence it is.
func TestFencedCodeIsReadAsTheParserReadsIt(t *testing.T) {
	table := "| Symptom | Where to look |\n| --- | --- |\n| charged twice | `Engine.BookTicket` in `sim/engine/booking.go` |\n"
	for name, md := range map[string]string{
		"tilde fence":        "~~~text\n" + table + "~~~\n",
		"longer fence":       "````text\n```\n" + table + "````\n",
		"indented tilde one": "  ~~~\n" + table + "  ~~~\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, err := Render(&lessons.Page{Slug: "t", Markdown: md}, 30, "dark")
			if err != nil {
				t.Fatal(err)
			}
			plain := ansi.Strip(out)
			if strings.Contains(plain, "Where to look:") || !strings.Contains(plain, "| charged twice |") {
				t.Errorf("the fenced table was not shown as written:\n%s", plain)
			}
		})
	}
	md := "Before.\n\n~~~text\nfirst\n\nsecond\n~~~\n\nAfter.\n"
	for _, b := range topBlocks(md) {
		if strings.Contains(b, "first") != strings.Contains(b, "second") {
			t.Errorf("a top block cuts the fence: %q of %q", b, topBlocks(md))
		}
	}
}

// The sequence diagram is drawn in place of the mermaid block the parser
// read, whichever fence it has.
func TestTheSequenceIsDrawnWhateverItsFence(t *testing.T) {
	p, err := lessons.Get("idempotency")
	if err != nil {
		t.Fatal(err)
	}
	for _, fence := range []string{"```", "~~~", "````"} {
		q := *p
		lines := strings.Split(q.Markdown, "\n")
		_, blocks := lessons.Fences(lines)
		for _, b := range blocks {
			if b.Info == "mermaid" {
				lines[b.Open], lines[b.Close] = fence+"mermaid", fence
			}
		}
		q.Markdown = strings.Join(lines, "\n")
		out, err := Render(&q, 100, "dark")
		if err != nil {
			t.Fatal(err)
		}
		if plain := ansi.Strip(out); strings.Contains(plain, "sequenceDiagram") || !strings.Contains(plain, "Browser") {
			t.Errorf("with %s the mermaid block was not drawn:\n%s", fence, plain)
		}
	}
}

// highlightedLanguages are the fenced languages learn's pages may show,
// with a line of each: each must come out in colours of its tokens, not as
// plain text.
var highlightedLanguages = map[string]string{
	"sh":   "learn serve 2>&1 | grep replayed # the replays",
	"sql":  "SELECT id FROM bookings WHERE idempotency_key = $1 FOR UPDATE;",
	"go":   "func (e *Engine) BookTicket(ctx context.Context) error { return nil }",
	"json": `{"booking_id": 42, "replayed": true}`,
	"http": "POST /bookings HTTP/1.1\nIdempotency-Key: 7c9e6679\n",
}

// sgrText matches an SGR sequence and the text it colours, up to the next
// escape.
var sgrText = regexp.MustCompile(`\x1b\[([0-9;]*)m([^\x1b]*)`)

// Fenced code in a language the pages use is highlighted: its words come
// out in more than one colour (a language without a lexer is plain text,
// all in one). Every language fenced in a lesson page is one of them.
func TestFencedCodeIsHighlighted(t *testing.T) {
	for lang, code := range highlightedLanguages {
		p := &lessons.Page{Slug: "code-" + lang}
		out, err := renderMarkdown(p, "```"+lang+"\n"+code+"\n```\n", 80, "dark")
		if err != nil {
			t.Fatal(err)
		}
		colours := map[string]bool{}
		for _, m := range sgrText.FindAllStringSubmatch(out, -1) {
			if strings.TrimSpace(m[2]) != "" {
				colours[m[1]] = true
			}
		}
		if len(colours) < 2 {
			t.Errorf("```%s is not highlighted: its words are in %d colour(s): %q", lang, len(colours), out)
		}
	}
	fence := regexp.MustCompile("(?m)^ {0,3}(?:```|~~~)[ \t]*([^ \t\n`]+)")
	for _, p := range lessons.All() {
		for _, m := range fence.FindAllStringSubmatch(p.Markdown, -1) {
			if lang := m[1]; lang != "mermaid" && lang != "text" && highlightedLanguages[lang] == "" {
				t.Errorf("%s fences ```%s, which this test does not check is highlighted", p.Slug, lang)
			}
		}
	}
}
