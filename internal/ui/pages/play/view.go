package play

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/dbstatus"
	"github.com/learn-idempotency/learn/internal/ui/components/panes"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/sim"
)

// lanesOrDefault are the run's participants: the browser, each API
// instance, Redis when the run keeps keys there, and PostgreSQL.
func (m *Model) lanesOrDefault() []seqdiag.Lane {
	if m.lanes == nil {
		return []seqdiag.Lane{{ID: sim.LaneBrowser, Name: "Browser"}, {ID: sim.LaneAPI(1), Name: "API-1"}, {ID: sim.LanePostgres, Name: "Postgres"}}
	}
	return m.lanes
}

// wide is the layout for large windows: lanes on the left, the panes in a
// column on the right.
func (m *Model) wide() bool { return m.c.Width >= 120 && m.c.Height >= 30 }

// View draws the frame on screen: the sequence so far, its caption, the
// rows read after it, the SQL sent and the API log.
func (m *Model) View() string {
	w, h := m.c.Width, m.c.Body()
	st := m.c.Styles
	header := m.header(w)
	switch m.phase {
	case phasePreparing:
		line := dbstatus.Line(st, m.c.DB, " ", w-1)
		if ready, _, _ := m.c.DB.Status(); ready {
			line = " " + st.Subtle.Render(common.Truncate(common.Ellipsis("preparing fresh tables"), w-2))
		}
		return header + "\n\n" + m.spin.View() + line
	case phaseFailed:
		return header + "\n\n" + st.Bad.Render("The run could not go on:") + "\n" +
			lipgloss.NewStyle().Width(w).Render(m.err.Error()) + "\n\n" + st.Subtle.Render("r tries again, esc goes back")
	}
	if m.c.Present {
		return m.presentView(w, h)
	}
	captionH := 2
	if m.wide() {
		leftW := w * 3 / 5
		lanes := m.lanesBox(leftW, h-1-captionH)
		rightW := w - leftW
		third := (h - 1) / 3
		rows := panes.Box(m.c.Styles, "Rows (committed)", m.rowsLines(rightW-4, third-3), rightW, third)
		sql := panes.Box(m.c.Styles, "SQL sent", m.traceLines(rightW-4, sim.KindSQL), rightW, third)
		logs := panes.Box(m.c.Styles, "API log", m.traceLines(rightW-4, sim.KindLog), rightW, h-1-2*third)
		left := lipgloss.JoinVertical(lipgloss.Left, lanes, m.caption(leftW, captionH))
		return lipgloss.JoinVertical(lipgloss.Left, header, lipgloss.JoinHorizontal(lipgloss.Top, left, lipgloss.JoinVertical(lipgloss.Left, rows, sql, logs)))
	}
	bottomH := max(8, h*2/5)
	lanesH := max(5, h-1-captionH-bottomH)
	leftW := max(32, w/3)
	rows := panes.Box(m.c.Styles, "Rows (committed)", m.rowsLines(leftW-4, bottomH-3), leftW, bottomH)
	trace := panes.Box(m.c.Styles, "SQL sent · API log", m.traceLines(w-leftW-4, sim.KindSQL, sim.KindLog), w-leftW, bottomH)
	return lipgloss.JoinVertical(lipgloss.Left, header, m.lanesBox(w, lanesH), m.caption(w, captionH),
		lipgloss.JoinHorizontal(lipgloss.Top, rows, trace))
}

// presentView is presenter mode: the sequence, a large caption, a clock and
// a step counter, and nothing else.
func (m *Model) presentView(w, h int) string {
	st := m.c.Styles
	clock := time.Since(m.c.PresentSince).Truncate(time.Second)
	state := "paused"
	switch {
	case m.phase == phaseFinished && m.view == m.newest():
		state = "done"
	case m.playing:
		state = "playing"
	}
	// Fixed width, so the clock does not move as the counter grows.
	top := fmt.Sprintf("%-8s %-18s %02d:%02d", state, m.stepCounter(), int(clock.Minutes()), int(clock.Seconds())%60)
	topLine := st.Title.Render(common.Truncate(m.scenario.Title+" · "+string(m.variant), w-ansi.StringWidth(top)-1))
	topLine += strings.Repeat(" ", max(1, w-ansi.StringWidth(topLine)-ansi.StringWidth(top))) + st.Subtle.Render(top)
	capH := 5
	text := m.captionText()
	big := lipgloss.NewStyle().Bold(true).Border(lipgloss.DoubleBorder()).BorderForeground(st.Accent.GetForeground()).
		Padding(1, 2).Width(w).Height(capH).MaxHeight(capH).Align(lipgloss.Center).Render(text)
	return lipgloss.JoinVertical(lipgloss.Left, topLine, m.lanesBox(w, h-1-capH), big)
}

func (m *Model) header(w int) string {
	st := m.c.Styles
	variant := " · " + string(m.variant)
	state := "paused"
	switch {
	case m.phase == phaseFinished && m.view == m.newest():
		state = "done"
	case m.playing:
		state = "playing"
	case m.view < m.newest():
		state = "replaying kept steps"
	}
	at := time.Duration(0)
	if m.view >= 0 {
		at = m.events[m.frames[m.view].ev].At
	}
	right := fmt.Sprintf("%s · t=%s · %gx · %s", m.stepCounter(), simTime(at), speeds[m.speed], state)
	if gap := w - ansi.StringWidth("Play: "+m.scenario.Title+variant) - ansi.StringWidth(right); gap >= 1 {
		return st.Title.Render("Play: "+m.scenario.Title) + st.Subtle.Render(variant) + strings.Repeat(" ", gap) + st.Subtle.Render(right)
	}
	// Narrow: the step, the state and the variant matter more than the title.
	right = fmt.Sprintf("%s · %gx · %s", m.stepCounter(), speeds[m.speed], state)
	title := common.Truncate("Play: "+m.scenario.Title, max(0, w-ansi.StringWidth(right)-ansi.StringWidth(variant)-1))
	gap := max(1, w-ansi.StringWidth(title)-ansi.StringWidth(variant)-ansi.StringWidth(right))
	return st.Title.Render(title) + st.Subtle.Render(variant) + strings.Repeat(" ", gap) + st.Subtle.Render(right)
}

// stepCounter is "step 5/12" once the run's length is known (it has ended),
// and "step 5" while the engine is still going.
func (m *Model) stepCounter() string {
	if m.phase == phaseFinished || m.closed {
		return fmt.Sprintf("step %d/%d", m.view+1, len(m.frames))
	}
	if m.view < m.newest() {
		return fmt.Sprintf("step %d of %d so far", m.view+1, len(m.frames))
	}
	return fmt.Sprintf("step %d", m.view+1)
}

// simTime is simulated time for people: "1.0s", "25h0m2s".
func simTime(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// lanesBox draws the sequence up to the frame on screen, newest at the
// bottom.
func (m *Model) lanesBox(w, h int) string {
	st := m.c.Styles
	d := seqdiag.New(m.lanesOrDefault(), w-2)
	room := max(1, h-2-2) // border, then the names and a rail
	last := m.view
	first := max(0, last+1-room)
	lines := []string{st.BoxTitle.Render(d.Header()), st.Faint.Render(d.Rail())}
	for i := first; i <= last; i++ {
		ev := m.events[m.frames[i].ev]
		a := seqdiag.Arrow{From: ev.From, To: ev.To, Label: m.label(ev, i), Lost: ev.Lost, Dashed: ev.Kind == sim.KindAnswer}
		line := d.Arrow(a)
		switch {
		case ev.Lost || ev.Kind == sim.KindCrash:
			line = st.Lost.Render(line)
		case i == last:
			line = st.Current.Render(line)
		case ev.To == sim.LanePostgres:
			line = st.Subtle.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < h-2 {
		lines = append(lines, st.Faint.Render(d.Rail()))
	}
	return st.Box.Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// label is the arrow's text; the running retry countdown is shown on the
// newest frame.
func (m *Model) label(ev sim.Event, frame int) string {
	l := ev.Label
	if ev.Copy > 0 {
		l = fmt.Sprintf("#%d %s", ev.Copy, l)
	}
	if frame == m.newest() && ev.Kind == sim.KindWait && m.playing && m.pending && m.countdown > 0 {
		l += fmt.Sprintf(" (%.1fs left)", m.countdown.Seconds())
	}
	return l
}

// captionText says what the frame on screen shows.
func (m *Model) captionText() string {
	st := m.c.Styles
	switch {
	case m.phase == phaseFinished && m.report != nil && m.view == m.newest():
		return st.Good.Render("Done: ") + m.report.Summary()
	case m.view < 0:
		return m.scenario.Explain(m.variant) + "\n" + st.Subtle.Render("space plays, n steps: each step is the real engine, held until you go on")
	}
	text := st.Caption.Render("▸ " + m.events[m.frames[m.view].ev].Text)
	if !m.playing && (m.pending || m.view < m.newest()) && !m.c.Present {
		text += st.Subtle.Render("   (n: next step)")
	}
	return text
}

func (m *Model) caption(w, h int) string {
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(m.captionText())
}

// rowsLines lists the tables as read after the frame on screen, in at most
// room lines of w cells.
func (m *Model) rowsLines(w, room int) []string {
	st := m.c.Styles
	if m.view < 0 {
		return []string{st.Subtle.Render("(no step yet)")}
	}
	f := m.frames[m.view]
	switch {
	case !f.loaded:
		return []string{st.Subtle.Render("reading…")}
	case f.rowsErr != nil:
		return []string{st.Bad.Render(common.Truncate(f.rowsErr.Error(), w))}
	}
	return panes.Rows(st, f.rows, m.seats, w, room)
}

// traceLines are the events of the given kinds up to the frame on screen.
func (m *Model) traceLines(w int, kinds ...sim.Kind) []string {
	if m.view < 0 {
		return nil
	}
	return panes.Trace(m.c.Styles, m.events[:m.frames[m.view].ev+1], w, kinds...)
}
