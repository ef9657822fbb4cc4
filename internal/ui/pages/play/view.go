package play

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/dbstatus"
	"github.com/learn-idempotency/learn/internal/ui/components/panes"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/internal/ui/components/story"
	"github.com/learn-idempotency/learn/internal/ui/components/verdict"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// lanesOrDefault are the run's participants: the browser, each API
// instance, Redis when the run keeps keys there, and PostgreSQL.
func (m *Model) lanesOrDefault() []seqdiag.Lane {
	if m.lanes == nil {
		return []seqdiag.Lane{{ID: trace.LaneBrowser, Name: "Browser"}, {ID: trace.LaneAPI(1), Name: "API-1"}, {ID: trace.LanePostgres, Name: "Postgres"}}
	}
	return m.lanes
}

// wide is the layout for large windows: lanes on the left, the panes in a
// column on the right.
func (m *Model) wide() bool { return m.c.Width >= 120 && m.c.Height >= 30 }

// View draws the frame on screen: the sequence so far, its caption, the
// rows read after it, the SQL sent and the API log; at the end of a run, the
// whole story compressed and the verdict.
func (m *Model) View() string {
	w, h := m.c.Width, m.c.Body()
	st := m.c.Styles
	switch m.phase {
	case phasePreparing:
		progress := m.c.DB.Progress()
		if ready, _, _ := m.c.DB.Status(); ready {
			progress = "preparing fresh tables"
			if why := m.run.Waiting(); why != "" {
				progress = why // other learners' runs hold the connections (a workshop)
			}
		}
		return m.header(w) + "\n\n" + m.spin.View() + " " + dbstatus.Block(st, m.c.DB, progress, w-2)
	case phaseFailed:
		return m.header(w) + "\n\n" + st.Bad.Render("The run could not go on:") + "\n" +
			lipgloss.NewStyle().Width(w).Render(m.err.Error()) + "\n\n" + st.Subtle.Render(retryHint(m.c.DB))
	}
	if m.c.Presenting {
		return m.presentView(w, h)
	}
	if m.atSummary() {
		return m.summaryView(w, h)
	}
	if m.atDiagnosis() {
		return m.diagnosisView(w, h)
	}
	header := m.header(w)
	hh := lipgloss.Height(header)
	if m.wide() {
		leftW := w * 3 / 5
		caption := m.caption(leftW)
		lanes := m.lanesBox(leftW, h-hh-lipgloss.Height(caption))
		rightW := w - leftW
		third := (h - hh) / 3
		rows := panes.Box(st, "Rows (committed)", m.rowsLines(rightW-4, third-3), rightW, third)
		sql := panes.Box(st, "SQL sent", m.traceLines(rightW-4, trace.KindSQL), rightW, third)
		logs := panes.Box(st, "API log", m.traceLines(rightW-4, trace.KindLog), rightW, h-hh-2*third)
		left := lipgloss.JoinVertical(lipgloss.Left, lanes, caption)
		return lipgloss.JoinVertical(lipgloss.Left, header, lipgloss.JoinHorizontal(lipgloss.Top, left, lipgloss.JoinVertical(lipgloss.Left, rows, sql, logs)))
	}
	caption := m.caption(w)
	bottomH := max(8, h*2/5)
	lanesH := max(5, h-hh-lipgloss.Height(caption)-bottomH)
	leftW := max(32, w/3)
	rows := panes.Box(st, "Rows (committed)", m.rowsLines(leftW-4, bottomH-3), leftW, bottomH)
	trace := panes.Box(st, "SQL sent · API log", m.traceLines(w-leftW-4, trace.KindSQL, trace.KindLog), w-leftW, bottomH)
	return lipgloss.JoinVertical(lipgloss.Left, header, m.lanesBox(w, lanesH), caption,
		lipgloss.JoinHorizontal(lipgloss.Top, rows, trace))
}

// verdictOf is the finished run's verdict.
func (m *Model) verdictOf() *sim.Verdict {
	if v := m.report.Verdict; v != nil {
		return v
	}
	return &sim.Verdict{Held: m.report.Passed(), Says: m.report.Summary()}
}

// summaryView is the frame after the last step: the whole story in the
// lesson's shape, the run's numbers and the verdict. The story comes first;
// when the whole verdict does not fit beside it, its headline does, and the
// next frame (n) has the rest.
func (m *Model) summaryView(w, h int) string {
	st := m.c.Styles
	v := m.verdictOf()
	lines := m.storyLines()
	header := m.header(w)
	numbers := st.Subtle.Render(common.Hang("", m.report.Summary(), w))
	if sp := sim.RetrySpread(m.report); sp.Retries >= sim.SpreadShown {
		// Many retries: when they left, a storm's picture.
		numbers += "\n" + st.Subtle.Render(common.Hang("retries per 100 ms: ", strings.Join(sp.Bars(), " · "), w))
	}
	// The whole verdict when it fits below the story; else the headline and
	// the diagnosis; else the headline. The next frame (n) has it whole.
	rest := "n: the whole verdict, with the invariants that failed · p steps back · r runs it again"
	options := []string{
		lipgloss.JoinVertical(lipgloss.Left, numbers, verdict.Render(st, v, w),
			st.Faint.Render(common.Hang("", m.withV("p steps back through the run · r runs it again"), w))),
	}
	if d := v.Diagnosis; d != nil {
		options = append(options, lipgloss.JoinVertical(lipgloss.Left, numbers, verdict.Headline(st, v, w),
			verdict.Diagnosis(st, d, w), st.Accent.Render(common.Hang("", rest, w))))
	}
	options = append(options, lipgloss.JoinVertical(lipgloss.Left, numbers, verdict.Headline(st, v, w),
		st.Accent.Render(common.Hang("", "n: the diagnosis, where to look and the fix · p steps back · r runs it again", w))))
	below := options[0]
	if m.hasDiagnosis() {
		for _, o := range options {
			below = o
			if lipgloss.Height(header)+len(lines)+4+lipgloss.Height(o) <= h {
				break
			}
		}
	}
	boxH := min(h-lipgloss.Height(header)-lipgloss.Height(below), len(lines)+4)
	return lipgloss.JoinVertical(lipgloss.Left, header, m.diagramBox(story.Lanes(), lines, w, boxH), below)
}

// withV is hint followed by "· v the other design" where v switches it
// (see switches), else hint alone.
func (m *Model) withV(hint string) string {
	if m.switches() {
		return hint + " · v the other design"
	}
	return hint
}

// diagnosisView is the frame after the summary of a run whose design broke,
// in w x h cells: the verdict whole, the run's numbers, and the tables as
// the run left them in a pane as tall as its rows. The header and the line
// of keys always show; what does not fit between them scrolls (↑/↓, the
// wheel, g/G), starting at the verdict, with a line saying what is above
// and below.
func (m *Model) diagnosisView(w, h int) string {
	st := m.c.Styles
	body := strings.Split(lipgloss.JoinVertical(lipgloss.Left, "", verdict.Render(st, m.verdictOf(), w), ""), "\n")
	// The run's numbers are one sentence wrapped: shown whole or not at all
	// at the bottom of the view, never cut after "1 booking row ·".
	numbersAt := len(body)
	body = append(body, strings.Split(st.Subtle.Render(common.Hang("", m.report.Summary(), w)), "\n")...)
	numbersEnd := len(body)
	if len(m.frames) > 0 {
		f := m.frames[len(m.frames)-1]
		paneH := len(f.rows.Bookings) + len(f.rows.Events) + 4 // borders, title, column names
		if len(f.rows.Bookings) == 0 {
			paneH = len(f.rows.Events) + 4
		}
		body = append(body, strings.Split(panes.Box(st, "Rows (committed) at the end", panes.Rows(st, f.rows, m.seats, w-4, paneH-3), w, paneH), "\n")...)
	}
	keys := st.Faint.Render(common.Hang("", m.withV("p: back to the story · r runs it again"), w))
	room := max(1, h-1-lipgloss.Height(keys))
	var where string
	if len(body) > room {
		room = max(1, room-1) // the line that says where the view stands
		m.scroll = max(0, min(m.scroll, len(body)-room))
		end := m.scroll + room
		if m.scroll < numbersAt && numbersAt < end && end < numbersEnd {
			end = numbersAt // the numbers would be cut: they wait below, whole
		}
		var parts []string
		if m.scroll > 0 {
			parts = append(parts, fmt.Sprintf("▲ %s above", common.Count(m.scroll, "line")))
		}
		if below := len(body) - end; below > 0 {
			what := "the rows at the end"
			if end <= numbersAt {
				what = "the numbers and rows"
			}
			parts = append(parts, fmt.Sprintf("▼ %d below (%s)", below, what))
		}
		where = st.Accent.Render(common.Truncate(strings.Join(parts, " · ")+" · ↑/↓ or the wheel scrolls", w))
		body = append(body[m.scroll:end:end], make([]string, m.scroll+room-end)...) // the keys stay at the bottom
	} else {
		m.scroll = 0
	}
	out := append([]string{m.header(w)}, body...)
	if where != "" {
		out = append(out, where)
	}
	return strings.Join(append(out, keys), "\n")
}

// storyLines are the summary's arrows, styled.
func (m *Model) storyLines() []drawn {
	var out []drawn
	for _, a := range story.Tell(m.events) {
		style := m.c.Styles.Caption
		if a.Lost {
			style = m.c.Styles.Lost
		}
		out = append(out, drawn{a, style})
	}
	return out
}

// presentView is presenter mode: the sequence, a large caption (at the end,
// the verdict, large), a clock and a step counter, and nothing else. Every
// box keeps its borders: the caption takes the lines its text needs.
func (m *Model) presentView(w, h int) string {
	st := m.c.Styles
	// Fixed width, so the clock does not move as the counter grows.
	top := fmt.Sprintf("%-8s %-18s %s", m.state(), m.stepCounter(), m.c.Clock())
	title := m.scenario.Title + " · " + m.designName()
	topLine := common.Header(st, title, "", top, w)
	if (m.atSummary() || m.atDiagnosis()) && m.report.Verdict != nil {
		big := verdict.Big(st, m.report.Verdict, w)
		return lipgloss.JoinVertical(lipgloss.Left, topLine, m.diagramBox(story.Lanes(), m.storyLines(), w, h-lipgloss.Height(topLine)-lipgloss.Height(big)), big)
	}
	big := lipgloss.NewStyle().Bold(true).Border(lipgloss.DoubleBorder()).BorderForeground(st.Accent.GetForeground()).
		Padding(1, 2).Width(w).Align(lipgloss.Center).Render(m.captionText(w - 6))
	return lipgloss.JoinVertical(lipgloss.Left, topLine, m.lanesBox(w, h-lipgloss.Height(topLine)-lipgloss.Height(big)), big)
}

// state is what the screen is doing: paused, playing, done.
func (m *Model) state() string {
	switch {
	case m.phase == phaseFinished && m.view >= m.newest():
		return "done"
	case m.playing:
		return "playing"
	case m.view < m.newest():
		return "replaying kept steps"
	}
	return "paused"
}

func (m *Model) header(w int) string {
	st := m.c.Styles
	title, variant := "Play: "+m.scenario.Title, " · "+m.designName()
	at := time.Duration(0)
	if m.view >= 0 && m.view < len(m.frames) {
		at = m.events[m.frames[m.view].ev].At
	} else if m.view >= len(m.frames) && len(m.events) > 0 {
		at = m.events[len(m.events)-1].At
	}
	left := ansi.StringWidth(title + variant)
	// The most detail that fits beside the whole title; when even the least
	// does not, the title is cut (the first caption has it whole), not the
	// design.
	// The run's time is its simulated clock's, and the header says so.
	right := fmt.Sprintf("%s · %s", m.stepCounter(), m.state())
	clock := "simulated clock t=" + simTime(at)
	for _, r := range []string{
		fmt.Sprintf("%s · %s · %gx · %s", m.stepCounter(), clock, speeds[m.speed], m.state()),
		fmt.Sprintf("%s · %s · %s", m.stepCounter(), clock, m.state()),
		fmt.Sprintf("%s · %gx · %s", m.stepCounter(), speeds[m.speed], m.state()),
		right,
		m.stepCounter(),
	} {
		if w-left-ansi.StringWidth(r) >= 1 {
			right = r
			break
		}
	}
	// The design stays whole (a lab's design is said nowhere else on
	// screen): the scenario's title gives way first.
	if room := w - ansi.StringWidth(variant) - ansi.StringWidth(right) - 1; left > room+ansi.StringWidth(variant) && room > 0 {
		title = common.Truncate(title, room)
	}
	return common.Header(st, title, variant, right, w)
}

// stepCounter is "step 5/12" once the run's length is known (it has ended),
// "summary" on the last frame, and "step 5" while the engine is still
// going.
func (m *Model) stepCounter() string {
	switch {
	case m.atSummary():
		return fmt.Sprintf("summary of %d steps", len(m.frames))
	case m.atDiagnosis():
		return "diagnosis"
	case m.phase == phaseFinished || m.closed:
		return fmt.Sprintf("step %d/%d", m.view+1, len(m.frames))
	case m.view < m.newest():
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

// drawn is an arrow with the style it is drawn in.
type drawn struct {
	seqdiag.Arrow
	style lipgloss.Style
}

// lanesBox draws the sequence up to the frame on screen, newest at the
// bottom.
func (m *Model) lanesBox(w, h int) string {
	st := m.c.Styles
	var lines []drawn
	for i := 0; i <= m.view && i < len(m.frames); i++ {
		ev := m.events[m.frames[i].ev]
		style := lipgloss.NewStyle()
		switch {
		case ev.Lost || ev.Kind == trace.KindCrash:
			style = st.Lost
		case i == m.view:
			style = st.Current
		case ev.To == trace.LanePostgres:
			style = st.Subtle
		}
		lines = append(lines, drawn{seqdiag.Arrow{From: ev.From, To: ev.To, Label: m.label(ev, i), Lost: ev.Lost, Dashed: ev.Kind == trace.KindAnswer}, style})
	}
	return m.diagramBox(m.lanesOrDefault(), lines, w, h)
}

// diagramBox draws lines between lanes in a w x h box, the newest at the
// bottom unless the learner scrolled up; when lines are hidden, the box's
// last line says how many and how to see them.
func (m *Model) diagramBox(lanes []seqdiag.Lane, lines []drawn, w, h int) string {
	st := m.c.Styles
	d := seqdiag.New(lanes, w-2)
	room := max(1, h-2-2) // border, then the names and a rail
	if len(lines) > room {
		room = max(1, room-1) // a line for where the view stands
	}
	scroll := min(m.scroll, max(0, len(lines)-room))
	end := len(lines) - scroll
	first := max(0, end-room)
	out := []string{st.BoxTitle.Render(d.Header()), st.Faint.Render(d.Rail())}
	for _, l := range lines[first:end] {
		out = append(out, l.style.Render(d.Arrow(l.Arrow)))
	}
	for len(out) < 2+room {
		out = append(out, st.Faint.Render(d.Rail()))
	}
	if first > 0 || end < len(lines) {
		var where []string
		if first > 0 {
			where = append(where, fmt.Sprintf("▲ %s above", common.Count(first, "line")))
		}
		if end < len(lines) {
			where = append(where, fmt.Sprintf("▼ %d below", len(lines)-end))
		}
		out = append(out, st.Accent.Render(common.Truncate(strings.Join(where, " · ")+" · ↑/↓ or the wheel scrolls", w-2)))
	}
	return st.Box.Width(w).Height(h).MaxHeight(h).Render(strings.Join(out, "\n"))
}

// who names the request an event belongs to when several are in flight:
// "copy 3 of 10", "event 2"; "" when there is only one.
func (m *Model) who(ev trace.Event) string {
	var parts []string
	if ev.Copy > 0 && m.copies > 1 {
		parts = append(parts, fmt.Sprintf("copy %d of %d", ev.Copy, m.copies))
	}
	if m.eventCount > 1 {
		if id := m.eventOf[ev.Intent]; id != 0 {
			parts = append(parts, fmt.Sprintf("event %d", id))
		}
	}
	return strings.Join(parts, ", ")
}

// label is the arrow's text, naming its request when several are in
// flight; the running retry countdown is shown on the newest frame.
func (m *Model) label(ev trace.Event, frame int) string {
	l := ev.Label
	if who := m.who(ev); who != "" {
		l = who + ": " + l
	}
	if frame == m.newest() && ev.Kind == trace.KindWait && m.playing && m.pending && m.countdown > 0 {
		l += fmt.Sprintf(" (%.1fs left)", m.countdown.Seconds())
	}
	return l
}

// captionText says what the frame on screen shows, wrapped to w cells: the
// whole text of the step, which an arrow's label may have had to cut.
func (m *Model) captionText(w int) string {
	st := m.c.Styles
	if m.view < 0 {
		explain := m.scenario.Explain(m.variant)
		if m.design != nil {
			explain = m.scenario.Title + ", under the lab's design: " + m.design.String()
		}
		return common.Hang("", explain, w) + "\n" +
			st.Subtle.Render(common.Hang("", "space plays, n steps: each step is the real engine, held until you go on", w))
	}
	ev := m.events[m.frames[m.view].ev]
	text := ev.Text
	if who := m.who(ev); who != "" {
		text = who + ": " + text
	}
	if d := story.ClockJump(m.events, m.frames[m.view].ev); d > 0 {
		text += fmt.Sprintf(" (learn moves its simulated clock %s ahead: no one waits)", simTime(d))
	}
	if !m.playing && (m.pending || m.view < m.newest()) && !m.c.Presenting {
		text += "   (n: next step)"
	}
	return st.Caption.Render(common.Hang("▸ ", text, w))
}

// caption is the caption block, at least two lines high.
func (m *Model) caption(w int) string {
	return lipgloss.NewStyle().Width(w).Height(2).Render(m.captionText(w))
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
		return strings.Split(st.Bad.Render(common.Hang("", f.rowsErr.Error(), w)), "\n")
	}
	return panes.Rows(st, f.rows, m.seats, w, room)
}

// traceLines are the events of the given kinds up to the frame on screen.
func (m *Model) traceLines(w int, kinds ...trace.Kind) []string {
	if m.view < 0 {
		return nil
	}
	return panes.Trace(m.c.Styles, m.events[:m.frames[m.view].ev+1], w, kinds...)
}

// retryHint is what the learner can do after a run failed: r tries again,
// unless learn's PostgreSQL is gone for good (learn could not start it
// again), when only a new learn can have one.
func retryHint(db *live.Postgres) string {
	if db != nil && db.Health().State == pgtemp.Gone {
		return "learn's PostgreSQL is gone and could not be started again: q quits, and the next learn starts a new one; esc goes back"
	}
	return "r tries again, esc goes back"
}
