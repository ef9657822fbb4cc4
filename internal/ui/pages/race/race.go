// Package race fires N copies of one booking request at the same instant,
// each on its own connection, fills a grid with each copy's answer as it
// arrives, and tallies the bookings read from PostgreSQL at the end.
package race

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/verdict"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Model fires N copies of one booking request at the same instant and
// fills a grid with each copy's answer as it arrives; the tally at the end
// is read from PostgreSQL.
type Model struct {
	common.PresenterMode
	common.TakesMouse // the wheel scrolls the body
	c                 *common.Common
	n                 int
	variant           sim.Variant
	run               *live.Run // the race on screen; messages of any other are stale
	running           bool
	cells             []raceCell
	report            *sim.Report
	err               error
	// design is the design of the race on screen, as fired (v may have
	// switched the variant since).
	design sim.Switches
	// holds says where learn holds every copy to force their interleaving
	// ("after the lookup"), from the run's pause events; "" when it holds
	// none.
	holds   string
	started time.Time
	took    time.Duration
	// scroll is the first line of the race's body on screen, when the body
	// is taller than the room between the fixed lines (see View).
	scroll int
}

// raceCell is one copy's state.
type raceCell struct {
	sent, held bool
	status     int
	bookingID  string
	replayed   bool
	failed     bool
}

// Messages of the race screen; run says which race each is about.
type (
	eventMsg struct {
		run    live.ID
		ev     trace.Event
		closed bool
	}
	doneMsg struct {
		run    live.ID
		report *sim.Report
		err    error
	}
	waitingMsg struct{ run live.ID }
)

// New is the race screen with the default number of copies.
func New(c *common.Common) *Model {
	return &Model{c: c, n: sim.DefaultCopies, variant: sim.Correct}
}

// Init waits for the learner to fire.
func (m *Model) Init() tea.Cmd { return nil }

// Title names the page.
func (m *Model) Title() string { return "Race" }

// Stand is the race, on screen: no place of its own to come
// back to, so the spot saved before stays.
func (m *Model) Stand() common.Stand {
	return common.Stand{At: progress.Place{Page: progress.PageRace}, Reopens: true, Keep: true}
}

// Close stops the race on screen.
func (m *Model) Close() {
	if m.run != nil {
		m.run.Stop()
	}
}

// fire starts a run of concurrent-copies with n copies, streamed but not
// gated: the copies race for real.
func (m *Model) fire() tea.Cmd {
	m.Close()
	m.cells, m.report, m.err, m.running = make([]raceCell, m.n), nil, nil, true
	m.scroll, m.holds = 0, ""
	s, _ := sim.Lookup("concurrent-copies")
	m.design = s.Design(m.variant)
	m.run = m.c.Runs.Start(s, sim.Options{Variant: m.variant, Copies: m.n, Trace: trace.Options{Stream: true}})
	m.started = time.Now()
	r := m.run
	return tea.Batch(func() tea.Msg {
		<-r.Done()
		rep, err := r.Result()
		return doneMsg{run: r.ID(), report: rep, err: err}
	}, waitEvent(r), m.watchWaiting())
}

// waitingTick is how often the race redraws while its run waits for
// PostgreSQL connections that other learners' runs hold (a workshop).
const waitingTick = 250 * time.Millisecond

// watchWaiting redraws the race until its run has its stage, so that why it
// waits stays up to date.
func (m *Model) watchWaiting() tea.Cmd {
	id := m.run.ID()
	return tea.Tick(waitingTick, func(time.Time) tea.Msg { return waitingMsg{run: id} })
}

func waitEvent(r *live.Run) tea.Cmd {
	return func() tea.Msg {
		<-r.Prepared()
		ev, ok := <-r.Events()
		return eventMsg{run: r.ID(), ev: ev, closed: !ok}
	}
}

// current reports whether a message about run id is about the race on
// screen.
func (m *Model) current(id live.ID) bool { return m.run != nil && m.run.ID() == id }

// Update fills the grid as the answers arrive, and takes the keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case eventMsg:
		if !m.current(msg.run) || msg.closed {
			return nil
		}
		m.record(msg.ev)
		return waitEvent(m.run)
	case doneMsg:
		if !m.current(msg.run) {
			return nil
		}
		m.running, m.took = false, time.Since(m.started)
		m.report, m.err = msg.report, msg.err
		// The stream may still hold answers; the recorded trace has them all.
		if tr := m.run.Trace(); tr != nil {
			m.cells = make([]raceCell, m.n)
			for _, ev := range tr.Recorded() {
				m.record(ev)
			}
		}
		return nil
	case waitingMsg:
		if !m.current(msg.run) || !m.running {
			return nil
		}
		select {
		case <-m.run.Prepared():
			return nil
		default:
			return m.watchWaiting()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll = max(0, m.scroll-1)
		case tea.MouseWheelDown:
			m.scroll++ // the view clamps it to the body's end
		}
	}
	return nil
}

// record puts one trace event in its copy's cell; a pause event also says
// where learn holds the copies.
func (m *Model) record(ev trace.Event) {
	if ev.Kind == trace.KindPause {
		m.holds = strings.TrimPrefix(ev.Label, "held ")
	}
	i := ev.Copy - 1
	if i < 0 || i >= len(m.cells) {
		return
	}
	c := &m.cells[i]
	switch ev.Kind {
	case trace.KindSend:
		c.sent = true
	case trace.KindPause:
		c.held = true
	case trace.KindAnswer:
		c.status, c.bookingID, c.replayed, c.held = ev.Status, ev.BookingID, ev.Replayed, false
	case trace.KindFail, trace.KindGiveUp:
		c.failed = true
	}
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	// ↑ and ↓ change the copies by ten; k, j, the page keys and g, G scroll.
	switch msg.String() {
	case "k":
		m.scroll = max(0, m.scroll-1)
		return nil
	case "j":
		m.scroll++
		return nil
	case "pgup", "ctrl+u", "b":
		m.scroll = max(0, m.scroll-max(1, m.c.Body()/2))
		return nil
	case "pgdown", "ctrl+d", "f":
		m.scroll += max(1, m.c.Body()/2)
		return nil
	case "g", "home":
		m.scroll = 0
		return nil
	case "G", "end":
		m.scroll = 1 << 20
		return nil
	}
	switch {
	case key.Matches(msg, k.Back):
		return common.BackCmd
	case key.Matches(msg, k.Open, k.Restart):
		return m.fire()
	case m.running:
	case key.Matches(msg, k.Variant):
		// The race on screen was of the other design: its tally and
		// verdict go with it, so that none reads as the new design's.
		m.variant = m.variant.Other()
		m.cells, m.report, m.err, m.holds, m.took = nil, nil, nil, "", 0
	case key.Matches(msg, k.Faster), msg.String() == "right":
		m.n = min(m.n+1, sim.MaxCopies)
	case key.Matches(msg, k.Slower), msg.String() == "left":
		m.n = max(m.n-1, sim.MinCopies)
	case msg.String() == "up":
		m.n = min(m.n+10, sim.MaxCopies)
	case msg.String() == "down":
		m.n = max(m.n-10, sim.MinCopies)
	}
	return nil
}

// KeyMap is the race's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	more := key.NewBinding(key.WithKeys("+", "right"), key.WithHelp("+/-", "copies ±1"))
	tens := key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "±10"))
	fire := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "fire"))
	return common.Bindings{
		// Most important first: the footer drops from the end.
		Short: []key.Binding{fire, more, k.Variant, tens, scrollKeys, k.Back, k.Help},
		Full:  [][]key.Binding{{more, tens, scrollKeys, scrollTopBottom}, {fire, k.Variant, k.Present}, {k.Back, k.Help, k.Quit}},
	}
}

// The race's scroll keys, as the footer and the overlay name them.
var (
	scrollKeys      = key.NewBinding(key.WithKeys("k", "j", "pgup", "pgdown"), key.WithHelp("k/j", "scroll"))
	scrollTopBottom = key.NewBinding(key.WithKeys("g", "G"), key.WithHelp("g/G", "top/bottom"))
)

// View draws the race in Width x Body() cells: the title and the copies on
// the first lines and the verdict's headline (or what the race is doing) on
// the last stay on screen; between them the explanation, the grid, the
// legend, the tally and the rest of the verdict scroll, with a line saying
// what is above and below when they do not fit.
func (m *Model) View() string {
	st := m.c.Styles
	w, h := m.c.Width, m.c.Body()
	top := []string{m.title(w), common.Truncate(fmt.Sprintf("Copies: %s   %s", st.Current.Render(fmt.Sprintf("%d", m.n)),
		st.Subtle.Render(fmt.Sprintf("(%d to %d; enter fires them)", sim.MinCopies, sim.MaxCopies))), w)}
	bottom := strings.Split(m.status(w), "\n")
	if len(bottom) > max(1, h/2) { // a long error: its start, the rest scrolls
		bottom = bottom[:max(1, h/2)]
	}
	body := strings.Split(m.body(w), "\n")
	room := h - len(top) - len(bottom)
	if len(body) > room {
		room-- // the line that says where the view stands
	}
	room = max(0, room)
	m.scroll = max(0, min(m.scroll, len(body)-room))
	out := append([]string{}, top...)
	end := min(len(body), m.scroll+room)
	out = append(out, body[m.scroll:end]...)
	if room < len(body) {
		var where []string
		if m.scroll > 0 {
			where = append(where, fmt.Sprintf("▲ %s above", common.Count(m.scroll, "line")))
		}
		if end < len(body) {
			where = append(where, fmt.Sprintf("▼ %d below", len(body)-end))
		}
		out = append(out, st.Accent.Render(common.Truncate(strings.Join(where, " · ")+" · k/j or the wheel scrolls", w)))
	}
	for len(out)+len(bottom) < h {
		out = append(out, "")
	}
	out = append(out, bottom...)
	if len(out) > h { // smaller than the app allows: the top wins
		out = out[:max(0, h)]
	}
	return strings.Join(out, "\n")
}

// title is the race's header, one line: what it is, the design, and in
// presenter mode the clock.
func (m *Model) title(w int) string {
	st := m.c.Styles
	tag := st.Good.Render("[correct]") + st.Faint.Render(" broken")
	if m.variant == sim.Broken {
		tag = st.Faint.Render("correct ") + st.Bad.Render("[broken]")
	}
	if m.c.Presenting {
		tag += st.Subtle.Render("   " + m.c.Clock())
	}
	tw := lipgloss.Width(tag)
	if tw+2 > w {
		return common.Header(st, "Race", "", "", w)
	}
	return common.Header(st, "Race: copies of one request at once", "", "", w-tw-2) + "  " + tag
}

// body is what scrolls: the explanation, the grid and its legend, the
// tally and the verdict under its headline.
func (m *Model) body(w int) string {
	st := m.c.Styles
	explain := fmt.Sprintf("fire %d copies of one request at the same instant, each on its own connection: the row lock and the key give %d answers of 200, one booking", m.n, m.n)
	if m.variant == sim.Broken {
		explain = fmt.Sprintf("without the row lock and the UNIQUE constraint, every one of the %d copies looks up the key before any inserts: %d bookings", m.n, m.n)
	}
	parts := []string{st.Subtle.Render(common.Hang("", explain, min(w, 100)))}
	if m.holds != "" {
		// Where learn forces the interleaving, it says so.
		parts = append(parts, st.Warn.Render(common.Hang("", fmt.Sprintf("learn holds every copy %s until all %d are there, so they interleave every time (◔)", m.holds, m.n), min(w, 100))))
	}
	if len(m.cells) > 0 {
		parts = append(parts, "", strings.TrimSuffix(m.grid(w), "\n"), st.Faint.Render(legend(w)))
	}
	switch {
	case m.err != nil:
		parts = append(parts, "", st.Bad.Render(common.Hang("", m.err.Error(), min(w, 100))))
	case m.report != nil:
		parts = append(parts, "", m.tally(w))
	}
	return strings.Join(parts, "\n")
}

// status is the last lines, always on screen: the verdict's headline (big
// in presenter mode), or what the race is doing.
func (m *Model) status(w int) string {
	st := m.c.Styles
	switch {
	case m.err != nil:
		return st.Bad.Render(common.Hang("✗ ", "the race could not run: "+m.err.Error(), min(w, 100)))
	case m.report != nil && m.report.Verdict != nil && m.c.Presenting:
		return verdict.Big(st, m.report.Verdict, w)
	case m.report != nil && m.report.Verdict != nil:
		return verdict.Headline(st, m.report.Verdict, w)
	case m.report != nil:
		return st.Subtle.Render(common.Hang("", m.report.Summary(), w))
	case m.running && m.run.Waiting() != "":
		return st.Warn.Render(common.Hang("", m.run.Waiting(), min(w, 100)))
	case m.running:
		return st.Subtle.Render("waiting for the answers…")
	}
	return st.Subtle.Render("press enter to fire")
}

// guardsSay says which guard settled the copies of a finished race, in
// words a learner reads, from the report's Guards (counted off the run's
// trace): key lookups that found the booking and replayed it, against
// INSERTs the UNIQUE constraint refused (unique violations, SQLSTATE
// 23505). locked says the design took the event's row lock: with it, the
// copies of one event queue, and each later one's lookup finds the first
// one's booking.
func guardsSay(g sim.Guards, locked bool) string {
	var who string
	switch {
	case g.Lookups > 0 && g.Violations == 0 && locked:
		who = "the row lock queued them"
	case g.Lookups > 0 && g.Violations == 0:
		who = "the key lookups settled them"
	case g.Lookups == 0 && g.Violations > 0:
		who = "the UNIQUE constraint settled them"
	case g.Violations > 0:
		who = "the key lookups and the UNIQUE constraint settled them"
	default:
		who = "no guard acted"
	}
	return fmt.Sprintf("%s: %s replayed, %s (23505)", who, common.Count(g.Lookups, "lookup"), common.Count(g.Violations, "unique violation"))
}

// legendItems say what the grid's marks mean.
var legendItems = []string{"● new booking", "○ replay", "◔ held by learn at a pause point", "◌ sent", "· not sent yet", "✕ failed"}

// legend is the legend in lines of at most w cells, an item never split.
func legend(w int) string {
	var lines []string
	line := ""
	for _, it := range legendItems {
		switch {
		case line == "":
			line = it
		case lipgloss.Width(line+"  "+it) <= w:
			line += "  " + it
		default:
			lines, line = append(lines, line), it
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// grid draws one cell a copy: its number and a mark, as many a row as fit.
func (m *Model) grid(w int) string {
	st := m.c.Styles
	const cellWidth = 6 // "%4d", the mark, a space
	perRow := max(1, min(20, w/cellWidth))
	var b strings.Builder
	for i, c := range m.cells {
		mark := st.Faint.Render("·")
		switch {
		case c.status == 200 && c.replayed:
			mark = st.Accent.Render("○")
		case c.status == 200:
			mark = st.Good.Render("●")
		case c.status != 0 || c.failed:
			mark = st.Bad.Render("✕")
		case c.held:
			mark = st.Warn.Render("◔")
		case c.sent:
			mark = st.Subtle.Render("◌")
		}
		fmt.Fprintf(&b, "%4d%s", i+1, mark)
		if (i+1)%perRow == 0 || i == len(m.cells)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// tally is the final count, read from PostgreSQL by the run's report.
func (m *Model) tally(w int) string {
	st := m.c.Styles
	r := m.report
	var ids []string
	seen := map[string]bool{}
	ok := 0
	for _, a := range r.Answers {
		if a.BookingID != nil && !seen[*a.BookingID] {
			seen[*a.BookingID] = true
			ids = append(ids, *a.BookingID)
		}
		if a.Status == 200 {
			ok++
		}
	}
	slices.SortFunc(ids, func(a, b string) int { // b2 before b10
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	idText := strings.Join(ids, " ")
	if len(ids) > 4 {
		idText = ids[0] + " to " + ids[len(ids)-1]
	}
	answers := fmt.Sprintf("%d answers (%d of them 200) · %s (%s)", len(r.Answers), ok, common.Count(len(ids), "distinct booking id"), idText)
	rows := fmt.Sprintf("%s in PostgreSQL · %d seats taken · %d ms of wall time", common.Count(r.BookingRows, "row"), r.SeatsTaken, m.took.Milliseconds())
	out := st.Subtle.Render(common.Hang("", answers, w) + "\n" + common.Hang("", rows, w) + "\n" + common.Hang("", guardsSay(r.Guards, !m.design.NoLock), w))
	if r.Verdict != nil && !m.c.Presenting {
		if d := verdict.Details(st, r.Verdict, w); d != "" {
			out += "\n" + d
		}
	}
	return out
}
