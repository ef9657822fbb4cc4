package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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
	return &raceModel{c: c, n: sim.DefaultCopies, variant: sim.Correct}
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
		run, err := s.Prepare(ctx, srv, opts)
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
	tag := st.good.Render("correct")
	if m.variant == sim.Broken {
		tag = st.bad.Render("broken")
	}
	b.WriteString(st.title.Render("Race: copies of one request at the same instant") + st.subtle.Render(" · ") + tag + "\n")
	s, _ := sim.Lookup("concurrent-copies")
	b.WriteString(st.subtle.Render(fit(s.Explain(m.variant), w)) + "\n\n")
	b.WriteString(fmt.Sprintf("Copies: %s   %s\n\n", st.current.Render(fmt.Sprintf("%d", m.n)),
		st.subtle.Render(fmt.Sprintf("(%d to %d; enter fires them, each on its own connection)", sim.MinCopies, sim.MaxCopies))))
	if len(m.cells) > 0 {
		b.WriteString(m.grid(w) + "\n")
		b.WriteString(st.faint.Render("● new booking  ○ replay  ◔ held at a pause point  ◌ sent  ✕ failed") + "\n\n")
	}
	switch {
	case m.err != nil:
		b.WriteString(st.bad.Render(fit(m.err.Error(), w)))
	case m.report != nil:
		b.WriteString(m.tally())
	case m.running:
		b.WriteString(st.subtle.Render("waiting for the answers…"))
	default:
		b.WriteString(st.subtle.Render("press enter to fire"))
	}
	return b.String()
}

// grid draws one cell a copy, ten a row.
func (m *raceModel) grid(w int) string {
	st := m.c.st
	const cellWidth = 11 // "%3d", space, mark, " b123", separator
	perRow := max(1, min(10, w/cellWidth))
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
		id := "    "
		if c.bookingID != "" {
			id = fmt.Sprintf("%-4s", c.bookingID)
		}
		fmt.Fprintf(&b, "%3d %s%s", i+1, mark, st.faint.Render(fit(" "+id, 5)))
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
	ids := map[string]bool{}
	ok := 0
	for _, a := range r.Answers {
		if a.BookingID != nil {
			ids[*a.BookingID] = true
		}
		if a.Status == 200 {
			ok++
		}
	}
	line := fmt.Sprintf("%d answers (%d of them 200) · %s\n%s in PostgreSQL · %d seats taken · %d ms",
		len(r.Answers), ok, countOf(len(ids), "distinct booking id"), countOf(r.BookingRows, "row"), r.SeatsTaken, m.took.Milliseconds())
	verdict := st.good.Render("One booking, whatever the number of copies.")
	if r.BookingRows != 1 {
		verdict = st.bad.Render(fmt.Sprintf("%d bookings for one intent: the user is charged %d times.", r.BookingRows, r.BookingRows))
	}
	return line + "\n" + verdict
}
