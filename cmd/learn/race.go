package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/sim"
)

// raceModel fires N copies of one booking request at the same instant and
// fills a grid with each copy's answer as it arrives; the tally at the end
// is read from PostgreSQL.
type raceModel struct {
	c       *common
	n       int
	variant sim.Variant
	gen     int
	running bool
	live    *liveRun
	cells   []raceCell
	report  *sim.Report
	err     error
	started time.Time
	took    time.Duration
	scroll  scroller
}

// raceCell is one copy's state.
type raceCell struct {
	sent, held bool
	status     int
	bookingID  string
	replayed   bool
	failed     bool
}

// Messages of the race screen; gen ties each to its run.
type (
	racePreparedMsg struct {
		gen  int
		live *liveRun
		err  error
	}
	raceEventMsg struct {
		gen    int
		ev     sim.Event
		closed bool
	}
	raceDoneMsg struct {
		gen    int
		report *sim.Report
		err    error
	}
)

func newRace(c *common) *raceModel {
	return &raceModel{c: c, n: sim.DefaultCopies, variant: sim.Correct, scroll: newScroller()}
}

func (m *raceModel) stopRun() {
	if m.live != nil {
		lr := m.live
		m.live = nil
		go lr.stop()
	}
}

func (m *raceModel) close() {
	if m.live != nil {
		m.live.stop()
		m.live = nil
	}
}

// fire starts a run of concurrent-copies with n copies, streamed but not
// gated: the copies race for real.
func (m *raceModel) fire() tea.Cmd {
	m.stopRun()
	m.gen++
	m.cells, m.report, m.err, m.running = make([]raceCell, m.n), nil, nil, true
	m.scroll.reset()
	if m.c.dbErr != nil {
		m.err, m.running = m.c.dbErr, false
		return nil
	}
	if !m.c.dbReady {
		m.err, m.running = fmt.Errorf("PostgreSQL is still starting: fire again in a moment"), false
		return nil
	}
	s, _ := sim.Lookup("concurrent-copies")
	gen, srv, opts := m.gen, m.c.srv, sim.Options{Variant: m.variant, Copies: m.n, Trace: sim.TraceOptions{Stream: true}}
	return func() tea.Msg {
		ctx, cancel := context.WithCancel(context.Background())
		run, err := s.Prepare(ctx, sim.DatabaseOf(srv.NewSchema), opts)
		if err != nil {
			cancel()
			return racePreparedMsg{gen: gen, err: err}
		}
		return racePreparedMsg{gen: gen, live: &liveRun{run: run, ctx: ctx, cancel: cancel, done: make(chan struct{})}}
	}
}

func (m *raceModel) waitEvent() tea.Cmd {
	gen, ch := m.gen, m.live.run.Trace.Events()
	return func() tea.Msg {
		ev, ok := <-ch
		return raceEventMsg{gen: gen, ev: ev, closed: !ok}
	}
}

func (m *raceModel) Update(msg tea.Msg) (*raceModel, tea.Cmd) {
	switch msg := msg.(type) {
	case racePreparedMsg:
		if msg.gen != m.gen {
			if msg.live != nil {
				go msg.live.stop()
			}
			return m, nil
		}
		if msg.err != nil {
			m.err, m.running = msg.err, false
			return m, nil
		}
		m.live, m.started = msg.live, time.Now()
		lr, gen := m.live, m.gen
		exec := func() tea.Msg {
			defer close(lr.done)
			rep, err := lr.run.Execute(lr.ctx)
			return raceDoneMsg{gen: gen, report: rep, err: err}
		}
		return m, tea.Batch(exec, m.waitEvent())
	case raceEventMsg:
		if msg.gen != m.gen || m.live == nil || msg.closed {
			return m, nil
		}
		m.record(msg.ev)
		return m, m.waitEvent()
	case raceDoneMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.running, m.took = false, time.Since(m.started)
		m.report, m.err = msg.report, msg.err
		// The stream may still hold answers; the recorded trace has them all.
		if m.live != nil {
			m.cells = make([]raceCell, m.n)
			for _, ev := range m.live.run.Trace.Recorded() {
				m.record(ev)
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// record puts one trace event in its copy's cell.
func (m *raceModel) record(ev sim.Event) {
	i := ev.Copy - 1
	if i < 0 || i >= len(m.cells) {
		return
	}
	c := &m.cells[i]
	switch ev.Kind {
	case sim.KindSend:
		c.sent = true
	case sim.KindPause:
		c.held = true
	case sim.KindAnswer:
		c.status, c.bookingID, c.replayed, c.held = ev.Status, ev.BookingID, ev.Replayed, false
	case sim.KindFail, sim.KindGiveUp:
		c.failed = true
	}
}

func (m *raceModel) key(msg tea.KeyPressMsg) (*raceModel, tea.Cmd) {
	k := m.c.keys
	if m.scroll.key(msg, k) {
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Back):
		m.stopRun()
		return m, back
	case key.Matches(msg, k.Open, k.Restart):
		return m, m.fire()
	case m.running:
	case key.Matches(msg, k.Variant):
		m.variant = other(m.variant)
	case key.Matches(msg, k.Faster), msg.String() == "right":
		m.n = min(m.n+1, sim.MaxCopies)
	case key.Matches(msg, k.Slower), msg.String() == "left":
		m.n = max(m.n-1, sim.MinCopies)
	case key.Matches(msg, k.Up):
		m.n = min(m.n+10, sim.MaxCopies)
	case key.Matches(msg, k.Down):
		m.n = max(m.n-10, sim.MinCopies)
	}
	return m, nil
}

func (m *raceModel) bindings() bindings {
	k := m.c.keys
	more := key.NewBinding(key.WithKeys("+", "right"), key.WithHelp("+/-", "copies ±1"))
	tens := key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "±10"))
	fire := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "fire"))
	return bindings{
		short: []key.Binding{more, tens, fire, k.Variant, k.Back, k.Help},
		full:  [][]key.Binding{{more, tens}, {fire, k.Variant}, {k.Back, k.Help, k.Quit}},
	}
}

func (m *raceModel) View() string {
	st := m.c.st
	w := m.c.width
	var b strings.Builder
	tag := st.good.Render("[correct]") + st.faint.Render(" broken")
	explain := fmt.Sprintf("fire %d copies of one request at the same instant, each on its own connection: the row lock and the key give %d answers of 200, one booking", m.n, m.n)
	if m.variant == sim.Broken {
		tag = st.faint.Render("correct ") + st.bad.Render("[broken]")
		explain = fmt.Sprintf("without the row lock and the UNIQUE constraint, every one of the %d copies looks up the key before any inserts: %d bookings", m.n, m.n)
	}
	b.WriteString(st.title.Render("Race: copies of one request at once") + "  " + tag + "\n")
	b.WriteString(st.subtle.Render(lipgloss.NewStyle().Width(min(w, 100)).Render(explain)) + "\n\n")
	b.WriteString(fmt.Sprintf("Copies: %s   %s\n\n", st.current.Render(fmt.Sprintf("%d", m.n)),
		st.subtle.Render(fmt.Sprintf("(%d to %d; enter fires them)", sim.MinCopies, sim.MaxCopies))))
	if len(m.cells) > 0 {
		b.WriteString(m.grid(w) + "\n")
		b.WriteString(st.faint.Render(fit("● new booking  ○ replay  ◔ held at a pause point  ◌ sent  · not sent yet  ✕ failed", w)) + "\n\n")
	}
	switch {
	case m.err != nil:
		b.WriteString(st.bad.Render(lipgloss.NewStyle().Width(min(w, 100)).Render(m.err.Error())))
	case m.report != nil:
		b.WriteString(m.tally())
	case m.running:
		b.WriteString(st.subtle.Render("waiting for the answers…"))
	default:
		b.WriteString(st.subtle.Render("press enter to fire"))
	}
	return m.scroll.view(b.String(), w, m.c.height-1)
}

// grid draws one cell a copy: its number and a mark, as many a row as fit.
func (m *raceModel) grid(w int) string {
	st := m.c.st
	const cellWidth = 6 // "%4d", the mark, a space
	perRow := max(1, min(20, w/cellWidth))
	var b strings.Builder
	for i, c := range m.cells {
		mark := st.faint.Render("·")
		switch {
		case c.status == 200 && c.replayed:
			mark = st.accent.Render("○")
		case c.status == 200:
			mark = st.good.Render("●")
		case c.status != 0 || c.failed:
			mark = st.bad.Render("✕")
		case c.held:
			mark = st.warn.Render("◔")
		case c.sent:
			mark = st.subtle.Render("◌")
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
func (m *raceModel) tally() string {
	st := m.c.st
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
		idText = ids[0] + " … " + ids[len(ids)-1]
	}
	line := fmt.Sprintf("%d answers (%d of them 200) · %s (%s)\n%s in PostgreSQL · %d seats taken · %d ms",
		len(r.Answers), ok, countOf(len(ids), "distinct booking id"), idText, countOf(r.BookingRows, "row"), r.SeatsTaken, m.took.Milliseconds())
	verdict := st.good.Render("One booking, whatever the number of copies.")
	if r.BookingRows != 1 {
		verdict = st.bad.Render(fmt.Sprintf("%d bookings for one intent: the user is charged %d times.", r.BookingRows, r.BookingRows))
	}
	return line + "\n" + verdict
}
