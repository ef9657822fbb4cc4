package ui

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/internal/childenv"
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/internal/ui/pages/reader"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// FirstFrame is the crash supervisor's first frame of a command line that
// opens the app on first: it draws on w at once, on the alternate screen,
// the screen the app will draw ([Preview], at the size of the terminal on
// standard output, with the progress as saved), so the person does not
// wait for the app's own process to start. It draws nothing (false) when
// the page has no preview, the size is unknown, or this process would
// measure widths otherwise than the app's: the app's process draws first.
func FirstFrame(w io.Writer, first common.Open, theme string, present bool) bool {
	if childenv.EastAsianWidths() {
		// With RUNEWIDTH_EASTASIAN set this process measures widths
		// otherwise than the app's (childenv.Environ): the app draws first.
		return false
	}
	cols, rows, err := term.GetSize(os.Stdout.Fd())
	if err != nil || cols <= 0 || rows <= 0 {
		return false
	}
	frame, ok := Preview(first, theme, present, cols, rows, peekProgress())
	if !ok {
		return false
	}
	_, _ = io.WriteString(w, ansi.SetModeAltScreenSaveCursor+ansi.HideCursor+ansi.EraseEntireScreen+ansi.CursorHomePosition)
	out := &colorprofile.Writer{Forward: w, Profile: lipgloss.Writer.Profile}
	_, _ = io.WriteString(out, strings.ReplaceAll(frame, "\n", "\r\n"))
	return true
}

// peekProgress is the learner's progress as saved, read without changing
// the file; nil when there is none to read.
func peekProgress() *progress.Progress {
	path, err := progress.DefaultPath()
	if err != nil {
		return nil
	}
	p, _, err := (&progress.Store{Path: path, Known: quiz.Known}).Peek()
	if err != nil {
		return nil
	}
	return p
}

// Preview is the app's first frame, w x h cells, drawn without starting
// anything: no PostgreSQL (its line says learn is looking for one), no live
// run, no save, and the lesson rendered at once. The crash supervisor draws
// it while the app's own process starts, so the first frame does not wait
// for a second start of the binary; the app then draws the same screen and
// goes on. saved is the learner's progress as saved, read without
// changing the file (progress.Store.Peek); nil is none.
//
// Only the pages that show no live run have a preview (home, the reader):
// ok is false for the others, which start a run the moment they open.
func Preview(first common.Open, theme string, present bool, w, h int, saved *progress.Progress) (frame string, ok bool) {
	head := func(p *lessons.Page, width int, style string) (string, error) {
		return markdown.Head(p, width, style, h)
	}
	return preview(first, theme, present, w, h, saved, head)
}

// preview is Preview with the page's render given: the top of the page
// (markdown.Head) for the first frame, the whole page (markdown.Body) in
// the test that the two frames are the same.
func preview(first common.Open, theme string, present bool, w, h int, saved *progress.Progress,
	render func(p *lessons.Page, width int, style string) (string, error)) (frame string, ok bool) {
	if first.Page != progress.PageHome && first.Page != progress.PageReader {
		return "", false
	}
	c := &common.Common{
		Ctx: context.Background(), Width: w, Height: h,
		Styles: common.NewStyles(theme != "light"), Keys: common.NewKeyMap(),
		Theme: theme, DocStyle: markdown.Style(theme, false),
		DB: live.Pending(), Progress: common.ShowProgress(saved), Docs: &common.Docs{},
		ExercisesDir: DefaultExercisesDir,
	}
	if present {
		c.Present, c.PresentSince = true, time.Now()
	}
	if first.Page == progress.PageReader {
		// The reader renders in the background; here it must be there.
		if p, err := lessons.Get(first.Name); err == nil {
			k := common.DocKey{Slug: p.Slug, Width: reader.WrapWidth(w), Style: c.DocStyle}
			if out, err := render(p, k.Width, k.Style); err == nil {
				c.Docs.Put(k, out)
			}
		}
	}
	m := New(c, first)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m.View().Content, true
}
