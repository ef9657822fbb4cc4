package ui

import (
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/internal/ui/pages/reader"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
)

// The first frame drawn from the parent is, cell for cell, the frame the
// app draws first, as Run builds it (a PostgreSQL not yet started, the
// progress as saved, the whole page rendered): the app draws over it with
// no visible change. Only the top of the page is rendered for it.
func TestPreviewIsTheAppsFirstFrame(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	store := &progress.Store{Path: filepath.Join(t.TempDir(), "progress.json")}
	if _, err := store.Update(func(p *progress.Progress) error {
		p.MarkRead("idempotency", time.Now())
		p.Record("checkpoint", "checkpoint/1", 1, time.Now())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	saved, _, err := store.Peek()
	if err != nil {
		t.Fatal(err)
	}
	opens := []common.Open{
		{Place: progress.Place{Page: progress.PageHome}},
		{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}},
		{Place: progress.Place{Page: progress.PageReader, Name: "idempotency", Section: "checkpoint"}},
		{Place: progress.Place{Page: progress.PageReader, Name: "retry-across-instances"}},
	}
	for _, first := range opens {
		for _, theme := range []string{"dark", "light"} {
			for _, size := range [][2]int{{80, 24}, {100, 30}, {200, 50}} {
				w, h := size[0], size[1]
				got, ok := Preview(first, theme, false, w, h, saved)
				if !ok {
					t.Fatalf("%+v: no preview", first)
				}
				never := make(chan struct{})
				db := live.LaunchAfter(pgtemp.Options{}, never)
				c := &common.Common{
					Ctx: t.Context(), Styles: common.NewStyles(theme != "light"), Keys: common.NewKeyMap(),
					Theme: theme, DocStyle: markdown.Style(theme, false),
					DB: db, Progress: common.OpenProgress(store), Docs: &common.Docs{},
					Width: w, Height: h, ExercisesDir: DefaultExercisesDir, // as Run sets it
				}
				if first.Page == progress.PageReader {
					p, err := lessons.Get(first.Name)
					if err != nil {
						t.Fatal(err)
					}
					k := common.DocKey{Slug: p.Slug, Width: reader.WrapWidth(w), Style: c.DocStyle}
					body, err := markdown.Body(p, k.Width, k.Style)
					if err != nil {
						t.Fatal(err)
					}
					c.Docs.Put(k, body)
				}
				m := New(c, first)
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				want := m.View().Content
				m.Close()
				if err := m.SaveOnExit(); err != nil {
					t.Fatal(err)
				}
				_ = db.Close()
				if got != want {
					t.Errorf("%+v %s %dx%d: the first frame differs from the app's:\n%s\nthe app's:\n%s", first, theme, w, h, got, want)
				}
			}
		}
	}
	for _, first := range []common.Open{{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, {Place: progress.Place{Page: progress.PageRace}}, {Place: progress.Place{Page: progress.PageLab}}} {
		if _, ok := Preview(first, "dark", false, 80, 24, nil); ok {
			t.Errorf("%+v starts a live run and has a preview", first)
		}
	}
}
