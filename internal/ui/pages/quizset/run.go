package quizset

// A question's run of its scenario (a live question's symptom and the run
// beside it, a prediction's run): started, awaited, and the line said
// beside the spinner while it goes.

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// startRun starts scenario name with opts on the page's runs and returns
// the run and the command that spins while it goes and, once it has ended,
// says its result as the message done makes of it. An unknown scenario is
// an error, and nothing starts.
func (m *Model) startRun(name string, opts sim.Options, done func(run live.ID, rep *sim.Report, err error) tea.Msg) (*live.Run, tea.Cmd, error) {
	sc, err := sim.Lookup(name)
	if err != nil {
		return nil, nil, err
	}
	r := m.c.Runs.Start(sc, opts)
	return r, tea.Batch(m.spin.Tick, func() tea.Msg {
		<-r.Done()
		rep, err := r.Result()
		return done(r.ID(), rep, err)
	}), nil
}

// runningLine is the spinner and what run r is doing, wrapped under its
// first word: waiting for other learners' runs to free a connection (a
// workshop), else waiting for PostgreSQL to start, else doing (which, for a
// live question's symptom, must not name the scenario: the name would give
// the cause away).
func (m *Model) runningLine(r *live.Run, doing string) string {
	if ready, _, err := m.c.DB.Status(); !ready && err == nil {
		doing = "waiting for PostgreSQL: " + common.Ellipsis(m.c.DB.Progress())
	}
	if why := r.Waiting(); why != "" {
		doing = why
	}
	return besideSpinner(m.spin.View(), m.c.Styles.Subtle, doing, m.c.Width)
}

// besideSpinner is text in style after spin, wrapped at w cells, every
// further line under the text's first word, and a newline.
func besideSpinner(spin string, style lipgloss.Style, text string, w int) string {
	pad := strings.Repeat(" ", lipgloss.Width(spin)+1)
	return spin + style.Render(" "+strings.TrimPrefix(common.Hang(pad, text, w), pad)) + "\n"
}
