package ui

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
)

// resize changes the window (the virtual terminal and the program's idea
// of it) as a terminal does.
func (u *uiTest) resize(w, h int) {
	u.scr.Resize(w, h)
	u.tm.Send(tea.WindowSizeMsg{Width: w, Height: h})
}

// lines is the screen's lines, padded to h.
func (u *uiTest) lines(h int) []string {
	l := strings.Split(u.screen(), "\n")
	for len(l) < h {
		l = append(l, "")
	}
	return l
}

// reversed is the text of the cells drawn in reverse video, line by line
// (the reader's current match).
func (u *uiTest) reversed() []string {
	var out []string
	u.scr.Do(func(emu *vt.Emulator) {
		b := emu.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			var line strings.Builder
			for x := b.Min.X; x < b.Max.X; x++ {
				if c := emu.CellAt(x, y); c != nil && c.Style.Attrs&uv.AttrReverse != 0 {
					line.WriteString(c.Content)
				}
			}
			if line.Len() > 0 {
				out = append(out, line.String())
			}
		}
	})
	return out
}

// A new width keeps the header and the view on the same section: the
// section tab went to, and a place scrolled to inside a section. Before,
// the view kept its line number, so from 120 to 80 columns the header said
// "Say it in an interview" over the Break-it table.
func TestReaderResizeKeepsTheSection(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 120, 30)
	u.waitFor(t, "In 1 minute")
	for i := 0; !strings.Contains(u.lines(30)[0], "· Say it in an interview"); i++ {
		if i == 20 {
			t.Fatalf("tab never reached the section:\n%s", u.screen())
		}
		head := u.lines(30)[0]
		u.press("tab")
		u.waitUntil(t, "the next section in the header", func() bool { return u.lines(30)[0] != head })
	}
	u.resize(80, 24)
	u.waitUntil(t, "the page rendered at 80 columns", func() bool {
		s := u.screen()
		return !strings.Contains(s, "rendering") && strings.Contains(u.lines(24)[23], "…") // the footer of 80 columns
	})
	u.waitFor(t, "Idempotency · Say it in an interview")
	if body := u.lines(24)[1:4]; !strings.Contains(strings.Join(body, "\n"), "## Say it in an interview") {
		t.Errorf("the header names the section, the view shows:\n%s", u.screen())
	}

	// Scrolled into a section (not jumped to it), at a new width, the
	// header and the view still agree.
	u.press("shift+tab")
	u.waitFor(t, "Idempotency · Break it")
	u.press("j", "j")
	u.waitUntil(t, "the view scrolled into Break it", func() bool {
		return !strings.Contains(u.lines(24)[1], "## Break it") && strings.Contains(u.lines(24)[0], "· Break it")
	})
	u.resize(120, 30)
	u.waitUntil(t, "the page rendered at 120 columns", func() bool {
		s := u.screen()
		return !strings.Contains(s, "rendering") && strings.Contains(u.lines(30)[29], "m mark read") // the footer of 120 columns
	})
	if head := u.lines(30)[0]; !strings.Contains(head, "· Break it") {
		t.Errorf("header %q over:\n%s", head, u.screen())
	}
}

// lineBreakPhrase is two words of page p that the reader at width w shows
// on two lines: the last word of one line and the first of the next.
func lineBreakPhrase(t *testing.T, p *lessons.Page, w int) string {
	t.Helper()
	out, err := markdown.Body(p, w-2, "notty")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	for i := 0; i+1 < len(lines); i++ {
		a, b := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(a) > 3 && len(b) > 3 && isWord(a[len(a)-1]) && isWord(b[0]) {
			return a[len(a)-1] + " " + b[0]
		}
	}
	t.Fatal("no phrase split across lines")
	return ""
}

func isWord(s string) bool {
	return len(s) > 3 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == ""
}

// Search finds a phrase the wrapping split across two lines and
// highlights the match itself (reverse video, readable without colour) on
// both lines.
func TestReaderSearchFindsWrappedPhrases(t *testing.T) {
	p, err := lessons.Get("idempotency")
	if err != nil {
		t.Fatal(err)
	}
	phrase := lineBreakPhrase(t, p, 80)
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute")
	u.press("/")
	u.waitFor(t, "search this page")
	u.tm.Type(phrase)
	u.press("enter")
	u.waitFor(t, "/"+phrase+": match 1 of ")
	words := strings.Fields(phrase)
	u.waitUntil(t, "the match highlighted on its two lines", func() bool {
		r := u.reversed()
		return len(r) == 2 && strings.EqualFold(r[0], words[0]) && strings.EqualFold(r[1], words[1])
	})
}

// Opening search shows the box with its whole placeholder (it showed "/s",
// its first letter, as if typed) and moves nothing on the page: the box
// takes the view's last line.
func TestReaderSearchBoxOpensInPlace(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute", "/ search")
	before := u.lines(24)
	u.press("/")
	u.waitFor(t, "/search this page", "enter search")
	after := u.lines(24)
	for i := 0; i < 22; i++ {
		if before[i] != after[i] {
			t.Errorf("line %d moved:\n%q\n%q", i, before[i], after[i])
		}
	}
}

// A new / starts an empty query, whatever was searched before; n keeps
// repeating the last search.
func TestReaderSearchStartsEmpty(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute")
	u.press("/")
	u.waitFor(t, "search this page")
	u.tm.Type("retry")
	u.press("enter")
	u.waitFor(t, "/retry: match 1 of ")
	u.press("/")
	u.waitFor(t, "search this page")
	u.tm.Type("key")
	u.press("enter")
	u.waitFor(t, "/key: match ")
	s := u.screen()
	var at, of int
	if _, err := fmt.Sscanf(s[strings.Index(s, "/key: match "):], "/key: match %d of %d", &at, &of); err != nil {
		t.Fatal(err)
	}
	u.press("n")
	u.waitFor(t, fmt.Sprintf("/key: match %d of %d", at%of+1, of))
}

// Presenter mode on the reader, as on play and race: no footer, the
// page uses the whole window, and the header has a section counter and
// the clock; P switches it, from --present or from the reader.
func TestReaderPresenterMode(t *testing.T) {
	present := func(c *common.Common) { c.Present, c.PresentSince = true, time.Now() }
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24, filepath.Join(t.TempDir(), "progress.json"), present)
	u.waitFor(t, "In 1 minute", "section 1 of ", "00:0")
	u.waitGone(t, "? help")
	u.press("P")
	u.waitFor(t, "? help")
	u.waitGone(t, "00:0")
	u.press("P")
	u.waitFor(t, "section 1 of ", "00:0")
	u.waitGone(t, "? help")
	u.end(t)
	if got, want := len(strings.Split(u.m.top().page.View(), "\n")), u.m.c.Body(); got != want || want != 24 {
		t.Errorf("the reader draws %d lines in presenter mode, want %d (the whole window)", got, want)
	}
}

// A page at its top stays at its top when the window's width changes (it
// moved one line down, to its first heading, losing the line above it).
func TestReaderAtItsTopStaysThereOnResize(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "Idempotency · In 1 minute", "0%")
	u.resize(100, 30)
	u.waitFor(t, "leaves everything exactly") // wrapped again for 100 columns
	if s := u.screen(); !strings.Contains(strings.SplitN(s, "\n", 2)[0], " 0%") {
		t.Errorf("after the resize the page is not at its top:\n%s", s)
	}
}

// A page at its end stays at its end whatever the window does: a larger
// window used to clamp the view to a line that then became the place, and
// back at the first size the end was off screen (87%).
func TestReaderAtItsEndStaysThereOnResize(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "Idempotency · In 1 minute", "0%")
	u.press("G")
	u.waitFor(t, "100%", "press it again to unmark it")
	for _, size := range [][2]int{{120, 40}, {80, 24}, {80, 40}, {80, 24}, {60, 20}} {
		u.resize(size[0], size[1])
		u.waitUntil(t, fmt.Sprintf("the end on screen at %dx%d", size[0], size[1]), func() bool {
			s := u.screen()
			lines := strings.Split(s, "\n")
			return strings.HasSuffix(strings.TrimRight(lines[0], " "), "100%") && strings.Contains(s, "press it again to unmark it") &&
				len([]rune(strings.TrimRight(lines[0], " "))) <= size[0]
		})
	}
}

// learn lesson opens on the page itself: the app's first frame is the
// page, as the supervisor's preview drew it, never a "rendering…" that
// the preview then flickers into (it drew the page; the app, rendering in
// the background, drew "rendering…" over it for a fifth of a second).
func TestTheLessonsFirstFrameIsThePage(t *testing.T) {
	raw := &uitest.Buffer{}
	scr := uitest.NewScreen(100, 30)
	drained := make(chan struct{})
	go func() { defer close(drained); _, _ = io.Copy(io.Discard, scr.Answers()) }() // nobody reads its answers
	t.Cleanup(func() { scr.Close(); <-drained })
	a := runAtTerminalOf(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 100, 30, io.MultiWriter(raw, scr))
	scr.WaitFor(t, "In 1 minute")
	a.cancel()
	_ = a.ended(t)
	if strings.Contains(raw.String(), "rendering") {
		t.Errorf("the app drew \"rendering…\" before the page")
	}
}
