package workshop

import (
	"context"
	"errors"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/internal/ui/pages/dashboard"
)

// Present shows the room in the presenter's terminal (in, out): the
// dashboard, in the app's root, in theme ("dark" or "light"). It returns
// when the presenter presses Ctrl-C, when ctx ends (a signal), or when the
// server stops serving; the caller then Closes the workshop.
func (w *Workshop) Present(ctx context.Context, in io.Reader, out io.Writer, theme string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := live.NewRuns(ctx, w.db)
	defer runs.Close()
	c := &common.Common{Ctx: ctx, Styles: common.NewStyles(theme != "light"), Keys: common.NewKeyMap(),
		Theme: theme, DocStyle: markdown.Style(theme, false),
		DB: w.db, Runs: runs, Progress: common.OpenProgress(nil), Docs: w.docs}
	m := ui.NewWith(c, dashboard.New(c, w.room, dashboard.Info{Join: w.Join(), Code: w.code, Budget: w.budget, Health: w.pg.Health}))
	opts := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithoutSignalHandler()}
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		// The profile lipgloss (or learn's supervisor) found for this very
		// terminal at the start, as the app takes it (ui.Run).
		opts = append(opts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
	p := tea.NewProgram(m, append(opts,
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.QuitMsg); ok {
				m.Quitting()
			}
			return msg
		}))...)
	go func() {
		select {
		case <-ctx.Done():
		case <-w.served:
		}
		p.Quit()
	}()
	_, err := p.Run()
	m.Close()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	return nil
}
