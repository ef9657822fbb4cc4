package main

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/sim"
)

// lanes are the run's participants: the browser, each API instance, Redis
// when the run keeps keys there, and PostgreSQL.
func (m *playModel) lanes() []seqLane {
	if m.laneSet == nil {
		return []seqLane{{ID: sim.LaneBrowser, Name: "Browser"}, {ID: sim.LaneAPI(1), Name: "API-1"}, {ID: sim.LanePostgres, Name: "Postgres"}}
	}
	return m.laneSet
}

// wide is the layout for large windows: lanes on the left, the panes in a
// column on the right.
func (m *playModel) wide() bool { return m.c.width >= 120 && m.c.height >= 30 }

func (m *playModel) View() string {
	w, h := m.c.width, m.c.height-1 // the root draws the help line
	if m.c.present {
		h = m.c.height
	}
	st := m.c.st
	header := m.header(w)
	switch m.phase {
	case phaseWaitDB, phasePreparing:
		progress := m.c.db.status()
		if m.c.dbReady {
			progress = "preparing fresh tables"
		}
		return header + "\n\n" + m.spin.View() + " " + st.subtle.Render(fit(ellipsis(progress), w-2))
	case phaseFailed:
		return header + "\n\n" + st.bad.Render("The run could not go on:") + "\n" +
			lipgloss.NewStyle().Width(w).Render(m.err.Error()) + "\n\n" + st.subtle.Render("r tries again, esc goes back")
	}
	if m.c.present {
		return m.presentView(w, h)
	}
	captionH := 2
	if m.wide() {
		leftW := w * 3 / 5
		lanes := m.lanesBox(leftW, h-1-captionH)
		rightW := w - leftW
		third := (h - 1) / 3
		rows := m.box("Rows (committed)", m.rowsLines(rightW-4, third-3), rightW, third)
		sql := m.box("SQL sent", m.traceLines(rightW-4, sim.KindSQL), rightW, third)
		logs := m.box("API log", m.traceLines(rightW-4, sim.KindLog), rightW, h-1-2*third)
		left := lipgloss.JoinVertical(lipgloss.Left, lanes, m.caption(leftW, captionH))
		return lipgloss.JoinVertical(lipgloss.Left, header, lipgloss.JoinHorizontal(lipgloss.Top, left, lipgloss.JoinVertical(lipgloss.Left, rows, sql, logs)))
	}
	bottomH := max(8, h*2/5)
	lanesH := max(5, h-1-captionH-bottomH)
	leftW := max(32, w/3)
	rows := m.box("Rows (committed)", m.rowsLines(leftW-4, bottomH-3), leftW, bottomH)
	trace := m.box("SQL sent · API log", m.traceLines(w-leftW-4, sim.KindSQL, sim.KindLog), w-leftW, bottomH)
	return lipgloss.JoinVertical(lipgloss.Left, header, m.lanesBox(w, lanesH), m.caption(w, captionH),
		lipgloss.JoinHorizontal(lipgloss.Top, rows, trace))
}

// presentView is presenter mode: the sequence, a large caption, a clock and
// a step counter, and nothing else.
func (m *playModel) presentView(w, h int) string {
	st := m.c.st
	clock := time.Since(m.c.presentSince).Truncate(time.Second)
	state := "paused"
	switch {
	case m.phase == phaseFinished && m.view == m.newest():
		state = "done"
	case m.playing:
		state = "playing"
	}
	// Fixed width, so the clock does not move as the counter grows.
	top := fmt.Sprintf("%-8s %-18s %02d:%02d", state, m.stepCounter(), int(clock.Minutes()), int(clock.Seconds())%60)
	topLine := st.title.Render(fit(m.scenario.Title+" · "+string(m.variant), w-ansi.StringWidth(top)-1))
	topLine += strings.Repeat(" ", max(1, w-ansi.StringWidth(topLine)-ansi.StringWidth(top))) + st.subtle.Render(top)
	capH := 5
	text := m.captionText()
	big := lipgloss.NewStyle().Bold(true).Border(lipgloss.DoubleBorder()).BorderForeground(st.accent.GetForeground()).
		Padding(1, 2).Width(w).Height(capH).MaxHeight(capH).Align(lipgloss.Center).Render(text)
	return lipgloss.JoinVertical(lipgloss.Left, topLine, m.lanesBox(w, h-1-capH), big)
}

func (m *playModel) header(w int) string {
	st := m.c.st
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
		return st.title.Render("Play: "+m.scenario.Title) + st.subtle.Render(variant) + strings.Repeat(" ", gap) + st.subtle.Render(right)
	}
	// Narrow: the step, the state and the variant matter more than the title.
	right = fmt.Sprintf("%s · %gx · %s", m.stepCounter(), speeds[m.speed], state)
	title := fit("Play: "+m.scenario.Title, max(0, w-ansi.StringWidth(right)-ansi.StringWidth(variant)-1))
	gap := max(1, w-ansi.StringWidth(title)-ansi.StringWidth(variant)-ansi.StringWidth(right))
	return st.title.Render(title) + st.subtle.Render(variant) + strings.Repeat(" ", gap) + st.subtle.Render(right)
}

// stepCounter is "step 5/12" once the run's length is known (it has ended),
// and "step 5" while the engine is still going.
func (m *playModel) stepCounter() string {
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
func (m *playModel) lanesBox(w, h int) string {
	st := m.c.st
	d := newSeqDiagram(m.lanes(), w-2)
	room := max(1, h-2-2) // border, then the names and a rail
	last := m.view
	first := max(0, last+1-room)
	lines := []string{st.boxTitle.Render(d.header()), st.faint.Render(d.rail())}
	for i := first; i <= last; i++ {
		ev := m.events[m.frames[i].ev]
		a := seqArrow{From: ev.From, To: ev.To, Label: m.label(ev, i), Lost: ev.Lost, Dashed: ev.Kind == sim.KindAnswer}
		line := d.arrow(a)
		switch {
		case ev.Lost || ev.Kind == sim.KindCrash:
			line = st.lost.Render(line)
		case i == last:
			line = st.current.Render(line)
		case ev.To == sim.LanePostgres:
			line = st.subtle.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < h-2 {
		lines = append(lines, st.faint.Render(d.rail()))
	}
	return st.box.Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// label is the arrow's text; the running retry countdown is shown on the
// newest frame.
func (m *playModel) label(ev sim.Event, frame int) string {
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
func (m *playModel) captionText() string {
	st := m.c.st
	switch {
	case m.phase == phaseFinished && m.report != nil && m.view == m.newest():
		return st.good.Render("Done: ") + summary(m.report)
	case m.view < 0:
		return m.scenario.Explain(m.variant) + "\n" + st.subtle.Render("space plays, n steps: each step is the real engine, held until you go on")
	}
	text := st.caption.Render("▸ " + m.events[m.frames[m.view].ev].Text)
	if !m.playing && (m.pending || m.view < m.newest()) && !m.c.present {
		text += st.subtle.Render("   (n: next step)")
	}
	return text
}

func (m *playModel) caption(w, h int) string {
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(m.captionText())
}

// summary is a one-line account of a report, in the JSON's terms, with
// the answers counted alike ("3 × 500, 200 b1").
func summary(r *sim.Report) string {
	return fmt.Sprintf("answers %s · %d lost · %s · %d seats taken",
		groupAnswers(r.Answers, false), r.Lost, countOf(r.BookingRows, "booking row"), r.SeatsTaken)
}

// groupAnswers counts equal answers in arrival order: "200 b1, 9 × 200 b1
// (replay)"; the refusals' messages only when withMessages.
func groupAnswers(answers []sim.AnswerReport, withMessages bool) string {
	if len(answers) == 0 {
		return "none"
	}
	counts := map[string]int{}
	var order []string
	for _, a := range answers {
		if !withMessages {
			a.Message = ""
		}
		s := a.String()
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	if len(order) > 6 { // many distinct bookings: count them instead
		return fmt.Sprintf("%d, %d distinct", len(answers), len(order))
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = s
		if counts[s] > 1 {
			parts[i] = fmt.Sprintf("%d × %s", counts[s], s)
		}
	}
	return strings.Join(parts, ", ")
}

// box draws a titled bordered pane of exactly w x h cells, showing the last
// lines that fit.
func (m *playModel) box(title string, lines []string, w, h int) string {
	st := m.c.st
	inner := max(0, h-3) // borders and the title
	if len(lines) > inner {
		lines = lines[len(lines)-inner:]
	}
	body := st.boxTitle.Render(fit(title, w-4)) + "\n" + strings.Join(lines, "\n")
	return st.box.Width(w).Height(h).MaxHeight(h).Padding(0, 1).Render(body)
}

// rowsLines lists the tables as read after the frame on screen, in at most
// room lines: the events always, then the newest bookings, saying how many
// older ones do not fit.
func (m *playModel) rowsLines(w, room int) []string {
	st := m.c.st
	if m.view < 0 {
		return []string{st.subtle.Render("(no step yet)")}
	}
	f := m.frames[m.view]
	if !f.loaded {
		return []string{st.subtle.Render("reading…")}
	}
	if f.rowsErr != nil {
		return []string{st.bad.Render(fit(f.rowsErr.Error(), w))}
	}
	var out []string
	for _, e := range f.rows.Events {
		out = append(out, fit(fmt.Sprintf("event %d  seats_left %d/%d", e.ID, e.SeatsLeft, m.seats), w))
	}
	bs := f.rows.Bookings
	if len(bs) == 0 {
		return append(out, st.subtle.Render("bookings: none"))
	}
	out = append(out, st.subtle.Render(fit("id  user  event qty key", w)))
	if fitIn := room - len(out); len(bs) > fitIn && fitIn > 1 {
		hidden := len(bs) - (fitIn - 1)
		out = append(out, st.faint.Render(fmt.Sprintf("… %s not shown", countOf(hidden, "older row"))))
		bs = bs[hidden:]
	}
	for _, b := range bs {
		out = append(out, fit(fmt.Sprintf("%-3s %-5s %-5d %-3d %s", b.ID, b.UserID, b.EventID, b.Quantity, b.Key), w))
	}
	return out
}

// traceLines are the events of the given kinds up to the frame on screen,
// each wrapped to w cells with its continuation indented.
func (m *playModel) traceLines(w int, kinds ...sim.Kind) []string {
	st := m.c.st
	if m.view < 0 {
		return nil
	}
	var out []string
	add := func(tag lipgloss.Style, name, text string) {
		for i, l := range strings.Split(ansi.Wrap(text, max(8, w-4), " ,"), "\n") {
			if i == 0 {
				out = append(out, tag.Render(name)+" "+l)
			} else {
				out = append(out, "    "+l)
			}
		}
	}
	for _, ev := range m.events[:m.frames[m.view].ev+1] {
		for _, k := range kinds {
			if ev.Kind != k {
				continue
			}
			switch k {
			case sim.KindSQL:
				add(st.sqlTag, "SQL", ev.Text)
			case sim.KindLog:
				add(st.logTag, "LOG", strings.ToLower(ev.Level)+": "+ev.Text)
			}
		}
	}
	return out
}
