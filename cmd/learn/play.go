package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/sim"
)

// speeds are the playback speeds, from 0.25x to 4x.
var speeds = []float64{0.25, 0.5, 1, 2, 4}

// stepPause is how long a step stays on screen at 1x while playing.
const stepPause = 1200 * time.Millisecond

// countdownTick is how often the retry countdown redraws.
const countdownTick = 100 * time.Millisecond

type playPhase int

const (
	phaseWaitDB playPhase = iota
	phasePreparing
	phaseRunning
	phaseFinished
	phaseFailed
)

// frame is one step of the sequence as it was shown: the step event and the
// committed rows read from PostgreSQL right after it.
type frame struct {
	ev      int // index in playModel.events
	rows    sim.Rows
	rowsErr error
	loaded  bool
}

// liveRun is a run in progress and how to stop it.
type liveRun struct {
	run    *sim.Run
	cancel context.CancelFunc
	ctx    context.Context
	done   chan struct{} // closed when Execute has returned
}

// stop cancels the run, waits for it and removes its schema.
func (lr *liveRun) stop() {
	lr.cancel()
	<-lr.done
	_ = lr.run.Close()
}

// playModel animates a scenario step by step from the trace of a real run.
type playModel struct {
	c        *common
	scenario *sim.Scenario
	variant  sim.Variant

	gen     int // run generation: messages of an older run are dropped
	phase   playPhase
	err     error
	live    *liveRun
	events  []sim.Event
	frames  []frame
	pending bool // the newest step waits for release
	queued  int  // n presses not yet spent: each releases one more step
	closed  bool // the trace has ended
	report  *sim.Report
	seats   int       // seats of each event at the start of the run
	laneSet []seqLane // the run's lanes

	playing   bool
	speed     int // index in speeds
	timer     int // token of the newest autoplay timer
	countdown time.Duration
	spin      spinner.Model
}

// Messages of the play screen; gen ties each to its run.
type (
	runPreparedMsg struct {
		gen  int
		live *liveRun
		err  error
	}
	traceMsg struct {
		gen    int
		ev     sim.Event
		closed bool
	}
	rowsMsg struct {
		gen, frame int
		rows       sim.Rows
		err        error
	}
	advanceMsg struct{ gen, token int }
	runDoneMsg struct {
		gen    int
		report *sim.Report
		err    error
	}
	releasedMsg struct{}
)

func newPlay(c *common, s *sim.Scenario) *playModel {
	return &playModel{c: c, scenario: s, variant: sim.Correct, speed: 2,
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

func (m *playModel) Init() tea.Cmd { return tea.Batch(m.start(), m.spin.Tick) }

// start begins a fresh run on fresh rows (a new schema).
func (m *playModel) start() tea.Cmd {
	m.stopRun()
	m.gen++
	m.phase, m.err, m.events, m.frames, m.pending, m.closed, m.report = phaseWaitDB, nil, nil, nil, false, false, nil
	m.countdown, m.laneSet, m.queued = 0, nil, 0
	if m.c.dbErr != nil {
		m.phase, m.err = phaseFailed, m.c.dbErr
		return nil
	}
	if !m.c.dbReady {
		return nil // dbReadyMsg calls start again
	}
	m.phase = phasePreparing
	gen, srv, s, variant := m.gen, m.c.srv, m.scenario, m.variant
	return func() tea.Msg {
		ctx, cancel := context.WithCancel(context.Background())
		run, err := s.Prepare(ctx, srv, sim.Options{Variant: variant, Trace: sim.TraceOptions{Stream: true, Gated: true}})
		if err != nil {
			cancel()
			return runPreparedMsg{gen: gen, err: err}
		}
		return runPreparedMsg{gen: gen, live: &liveRun{run: run, ctx: ctx, cancel: cancel, done: make(chan struct{})}}
	}
}

// stopRun stops the current run, if any, in the background.
func (m *playModel) stopRun() {
	if m.live == nil {
		return
	}
	lr := m.live
	m.live = nil
	go lr.stop()
}

// close stops the current run and waits until it is removed; for quitting.
func (m *playModel) close() {
	if m.live != nil {
		m.live.stop()
		m.live = nil
	}
}

func execute(gen int, lr *liveRun) tea.Cmd {
	return func() tea.Msg {
		defer close(lr.done)
		rep, err := lr.run.Execute(lr.ctx)
		return runDoneMsg{gen: gen, report: rep, err: err}
	}
}

func waitEvent(gen int, ch <-chan sim.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		return traceMsg{gen: gen, ev: ev, closed: !ok}
	}
}

func fetchRows(gen, frame int, lr *liveRun) tea.Cmd {
	return func() tea.Msg {
		rows, err := lr.run.Rows(lr.ctx)
		return rowsMsg{gen: gen, frame: frame, rows: rows, err: err}
	}
}

func release(lr *liveRun) tea.Cmd {
	return func() tea.Msg {
		_ = lr.run.Trace.Release(lr.ctx)
		return releasedMsg{}
	}
}

func (m *playModel) Update(msg tea.Msg) (*playModel, tea.Cmd) {
	switch msg := msg.(type) {
	case dbReadyMsg:
		if m.phase == phaseWaitDB {
			return m, m.start()
		}
	case spinner.TickMsg:
		if m.phase != phaseWaitDB && m.phase != phasePreparing {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case runPreparedMsg:
		if msg.gen != m.gen {
			if msg.live != nil {
				go msg.live.stop()
			}
			return m, nil
		}
		if msg.err != nil {
			m.phase, m.err = phaseFailed, msg.err
			return m, nil
		}
		m.live, m.phase = msg.live, phaseRunning
		m.seats = msg.live.run.Setup.Seats
		m.laneSet = nil
		for _, l := range msg.live.run.Lanes() {
			m.laneSet = append(m.laneSet, seqLane{ID: l.ID, Name: l.Name})
		}
		return m, tea.Batch(execute(m.gen, m.live), waitEvent(m.gen, m.live.run.Trace.Events()))
	case traceMsg:
		if msg.gen != m.gen || m.live == nil {
			return m, nil
		}
		if msg.closed {
			m.closed = true
			return m, nil
		}
		m.events = append(m.events, msg.ev)
		cmds := []tea.Cmd{waitEvent(m.gen, m.live.run.Trace.Events())}
		if msg.ev.Kind.IsStep() {
			m.frames = append(m.frames, frame{ev: len(m.events) - 1})
			m.pending = true
			m.countdown = msg.ev.Delay
			cmds = append(cmds, fetchRows(m.gen, len(m.frames)-1, m.live))
		}
		return m, tea.Batch(cmds...)
	case rowsMsg:
		if msg.gen != m.gen || msg.frame >= len(m.frames) {
			return m, nil
		}
		f := &m.frames[msg.frame]
		f.rows, f.rowsErr, f.loaded = msg.rows, msg.err, true
		if msg.frame == len(m.frames)-1 {
			if m.queued > 0 && m.pending {
				m.queued--
				m.countdown = 0
				return m, m.step()
			}
			return m, m.schedule()
		}
	case advanceMsg:
		if msg.gen != m.gen || msg.token != m.timer || !m.playing || !m.pending {
			return m, nil
		}
		if m.countdown > 0 {
			m.countdown -= time.Duration(float64(countdownTick) * speeds[m.speed])
			if m.countdown > 0 {
				return m, m.tick(countdownTick)
			}
			m.countdown = 0
		}
		return m, m.step()
	case runDoneMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if msg.err != nil && m.phase == phaseRunning {
			m.phase, m.err = phaseFailed, msg.err
			return m, nil
		}
		m.phase, m.report, m.playing = phaseFinished, msg.report, false
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *playModel) key(msg tea.KeyPressMsg) (*playModel, tea.Cmd) {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back):
		m.stopRun()
		return m, back
	case key.Matches(msg, k.Play):
		if m.phase == phaseFailed {
			return m, nil
		}
		if m.phase == phaseFinished {
			m.playing = true
			return m, m.start()
		}
		m.playing = !m.playing
		return m, m.schedule()
	case key.Matches(msg, k.Step):
		m.countdown = 0
		if !m.pending {
			// The next step has not arrived yet: spend the press on it.
			if m.phase == phaseRunning {
				m.queued++
			}
			return m, nil
		}
		return m, m.step()
	case key.Matches(msg, k.Restart):
		return m, m.start()
	case key.Matches(msg, k.Variant):
		if !m.scenario.HasBroken() {
			return m, nil
		}
		m.variant = other(m.variant)
		return m, m.start()
	case key.Matches(msg, k.Faster):
		m.speed = min(m.speed+1, len(speeds)-1)
		return m, m.schedule()
	case key.Matches(msg, k.Slower):
		m.speed = max(m.speed-1, 0)
		return m, m.schedule()
	}
	return m, nil
}

// step lets the waiting step of the engine go on.
func (m *playModel) step() tea.Cmd {
	if !m.pending || m.live == nil {
		return nil
	}
	m.pending = false
	return release(m.live)
}

// schedule arms the autoplay timer for the newest step once its rows are in;
// a newer timer replaces any older one.
func (m *playModel) schedule() tea.Cmd {
	if !m.playing || !m.pending || len(m.frames) == 0 || !m.frames[len(m.frames)-1].loaded {
		return nil
	}
	if m.countdown > 0 {
		return m.tick(countdownTick)
	}
	return m.tick(time.Duration(float64(stepPause) / speeds[m.speed]))
}

func (m *playModel) tick(d time.Duration) tea.Cmd {
	m.timer++
	gen, token := m.gen, m.timer
	return tea.Tick(d, func(time.Time) tea.Msg { return advanceMsg{gen: gen, token: token} })
}

func (m *playModel) bindings() bindings {
	k := m.c.keys
	return bindings{
		short: []key.Binding{k.Play, k.Step, k.Restart, k.Variant, k.Faster, k.Slower, k.Back, k.Help},
		full: [][]key.Binding{
			{k.Play, k.Step, k.Restart, k.Variant},
			{k.Faster, k.Slower},
			{k.Back, k.Help, k.Quit},
		},
	}
}

// lanes are the run's participants: the browser, each API instance, Redis
// when the run keeps keys there, and PostgreSQL.
func (m *playModel) lanes() []seqLane {
	if m.laneSet == nil {
		return []seqLane{{ID: sim.LaneBrowser, Name: "Browser"}, {ID: sim.LaneAPI(1), Name: "API-1"}, {ID: sim.LanePostgres, Name: "Postgres"}}
	}
	return m.laneSet
}

func (m *playModel) View() string {
	w, h := m.c.width, m.c.height-1 // the root draws the help line
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
	bottomH := max(8, h*2/5)
	captionH := 2
	lanesH := max(5, h-1-captionH-bottomH)
	lanes := m.lanesBox(w, lanesH)
	caption := m.caption(w, captionH)
	leftW := max(32, w/3)
	rows := m.box("Rows (committed)", m.rowsLines(leftW-4), leftW, bottomH)
	trace := m.box("SQL sent · API log", m.traceLines(w-leftW-4), w-leftW, bottomH)
	return lipgloss.JoinVertical(lipgloss.Left, header, lanes, caption, lipgloss.JoinHorizontal(lipgloss.Top, rows, trace))
}

func (m *playModel) header(w int) string {
	st := m.c.st
	left := st.title.Render("Play: "+m.scenario.Title) + st.subtle.Render(" · "+string(m.variant))
	state := "paused"
	switch {
	case m.phase == phaseFinished:
		state = "done"
	case m.playing:
		state = "playing"
	}
	at := time.Duration(0)
	if n := len(m.frames); n > 0 {
		at = m.events[m.frames[n-1].ev].At
	}
	right := fmt.Sprintf("step %d · t=%.1fs · %gx · %s", len(m.frames), at.Seconds(), speeds[m.speed], state)
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return fit(ansi.Strip(left), w)
	}
	return left + strings.Repeat(" ", gap) + st.subtle.Render(right)
}

// lanesBox draws the sequence so far, newest arrow at the bottom.
func (m *playModel) lanesBox(w, h int) string {
	st := m.c.st
	inner := w - 2
	d := newSeqDiagram(m.lanes(), inner)
	room := max(1, h-2-2) // border, then the names and a rail
	first := max(0, len(m.frames)-room)
	lines := []string{st.boxTitle.Render(d.header()), st.faint.Render(d.rail())}
	for i := first; i < len(m.frames); i++ {
		ev := m.events[m.frames[i].ev]
		a := seqArrow{From: ev.From, To: ev.To, Label: m.label(ev, i == len(m.frames)-1), Lost: ev.Lost,
			Dashed: ev.Kind == sim.KindAnswer}
		line := d.arrow(a)
		switch {
		case ev.Lost:
			line = st.lost.Render(line)
		case i == len(m.frames)-1:
			line = st.current.Render(line)
		case ev.Kind == sim.KindSQL || ev.To == sim.LanePostgres:
			line = st.subtle.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < h-2 {
		lines = append(lines, st.faint.Render(d.rail()))
	}
	return st.box.Width(w).Height(h).Render(strings.Join(lines, "\n"))
}

// label is the arrow's text; a running retry countdown is shown on it.
func (m *playModel) label(ev sim.Event, newest bool) string {
	l := ev.Label
	if ev.Copy > 0 {
		l = fmt.Sprintf("#%d %s", ev.Copy, l)
	}
	if newest && ev.Kind == sim.KindWait && m.pending && m.countdown > 0 {
		l += fmt.Sprintf(" (%.1fs left)", m.countdown.Seconds())
	}
	return l
}

func (m *playModel) caption(w, h int) string {
	st := m.c.st
	var text string
	switch {
	case m.phase == phaseFinished && m.report != nil:
		text = st.good.Render("Done: ") + summary(m.report)
	case len(m.frames) == 0:
		text = m.scenario.Explain(m.variant) + "\n" + st.subtle.Render("space plays, n steps: each step is the real engine, held until you go on")
	default:
		ev := m.events[m.frames[len(m.frames)-1].ev]
		text = st.caption.Render("▸ " + ev.Text)
		if !m.playing && m.pending {
			text += st.subtle.Render("   (n: next step)")
		}
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(text)
}

// summary is a one-line account of a report, in the JSON's terms.
func summary(r *sim.Report) string {
	var answers []string
	for _, a := range r.Answers {
		s := fmt.Sprint(a.Status)
		if a.BookingID != nil {
			s += " " + *a.BookingID
		}
		if a.Replayed {
			s += " (replay)"
		}
		if a.Message != "" {
			s += " " + a.Message
		}
		answers = append(answers, s)
	}
	if len(answers) > 3 {
		answers = append(answers[:3], fmt.Sprintf("… %d in all", len(r.Answers)))
	}
	return fmt.Sprintf("answers %s · %d lost · %s · %d seats taken",
		strings.Join(answers, ", "), r.Lost, countOf(r.BookingRows, "booking row"), r.SeatsTaken)
}

// box draws a titled bordered pane of exactly w x h cells.
func (m *playModel) box(title string, lines []string, w, h int) string {
	st := m.c.st
	inner := h - 3 // borders and the title
	if len(lines) > inner {
		lines = lines[len(lines)-inner:]
	}
	body := st.boxTitle.Render(fit(title, w-4)) + "\n" + strings.Join(lines, "\n")
	return st.box.Width(w).Height(h).MaxHeight(h).Padding(0, 1).Render(body)
}

// rowsLines lists the tables as read after the newest step.
func (m *playModel) rowsLines(w int) []string {
	st := m.c.st
	if len(m.frames) == 0 {
		return []string{st.subtle.Render("(no step yet)")}
	}
	f := m.frames[len(m.frames)-1]
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
	if len(f.rows.Bookings) == 0 {
		out = append(out, st.subtle.Render("bookings: none"))
	} else {
		out = append(out, st.subtle.Render(fit("id  user  event qty key", w)))
	}
	for _, b := range f.rows.Bookings {
		out = append(out, fit(fmt.Sprintf("%-3s %-5s %-5d %-3d %s", b.ID, b.UserID, b.EventID, b.Quantity, b.Key), w))
	}
	return out
}

// traceLines are the SQL statements and log lines so far, each wrapped to w
// cells with its continuation indented.
func (m *playModel) traceLines(w int) []string {
	st := m.c.st
	var out []string
	add := func(tag lipgloss.Style, name, text string) {
		wrapped := strings.Split(ansi.Wrap(text, max(8, w-4), " ,"), "\n")
		for i, l := range wrapped {
			if i == 0 {
				out = append(out, tag.Render(name)+" "+l)
			} else {
				out = append(out, "    "+l)
			}
		}
	}
	for _, ev := range m.events {
		switch ev.Kind {
		case sim.KindSQL:
			add(st.sqlTag, "SQL", ev.Text)
		case sim.KindLog:
			add(st.logTag, "LOG", strings.ToLower(ev.Level)+": "+ev.Text)
		}
	}
	return out
}

// countOf is "1 booking row" or "2 booking rows".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ellipsis ends a progress line with one "…".
func ellipsis(s string) string { return strings.TrimRight(s, ".…") + "…" }
