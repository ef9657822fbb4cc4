// Package play animates a scenario step by step from the trace of a real
// run on PostgreSQL: lanes for the browser, the API instances and
// PostgreSQL, the rows read after each step, the SQL sent and the API log.
// The engine is held at each step until the learner goes on (a gated
// trace), so what is on screen is what happened, when it happened.
package play

import (
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// speeds are the playback speeds, from 0.25x to 4x.
var speeds = []float64{0.25, 0.5, 1, 2, 4}

// stepPause is how long a step stays on screen at 1x while playing.
const stepPause = 1200 * time.Millisecond

// countdownTick is how often the retry countdown redraws.
const countdownTick = 100 * time.Millisecond

type phase int

const (
	phasePreparing phase = iota // waiting for PostgreSQL, or making the tables
	phaseRunning
	phaseFinished
	phaseFailed
)

// frame is one step of the sequence as it was shown: the step event and the
// committed rows read from PostgreSQL right after it.
type frame struct {
	ev      int // index in Model.events
	rows    engine.Rows
	rowsErr error
	loaded  bool
}

// Model animates a scenario step by step from the trace of a real run.
// Every step's frame (its event and the rows read after it) is kept, so
// stepping back shows exactly what was shown, without running again.
type Model struct {
	common.PresenterMode
	common.TakesMouse // the wheel scrolls the diagram
	c                 *common.Common
	scenario          *sim.Scenario
	variant           sim.Variant
	design            *sim.Switches // a design of the lab instead of the variants; nil for those

	run     *live.Run // the run on screen; messages of any other are stale
	phase   phase
	err     error
	events  []trace.Event
	frames  []frame
	view    int  // the frame on screen; -1 before the first
	pending bool // the newest step is held until it is released
	queued  int  // forward presses not yet spent: each releases one more step
	closed  bool // the trace has ended
	report  *sim.Report
	seats   int            // seats of each event at the start of the run
	lanes   []seqdiag.Lane // the run's lanes
	scroll  int            // diagram lines the learner scrolled up from the newest

	// Which request an event belongs to, when several are in flight.
	copies     int           // copies of one request sent at once
	eventCount int           // events the run books
	eventOf    map[int]int64 // intent → the event it books

	playing   bool
	speed     int // index in speeds
	timer     int // token of the newest autoplay timer
	countdown time.Duration
	spin      spinner.Model
}

// Messages of the play screen; run says which run each is about.
type (
	preparedMsg struct{ run live.ID }
	traceMsg    struct {
		run    live.ID
		ev     trace.Event
		closed bool
	}
	rowsMsg struct {
		run   live.ID
		frame int
		rows  engine.Rows
		err   error
	}
	advanceMsg struct {
		run   live.ID
		token int
	}
	doneMsg struct {
		run    live.ID
		report *sim.Report
		err    error
	}
	releasedMsg struct{}
)

// New plays scenario s in variant v (the correct design when v is empty or
// s has no broken variant).
func New(c *common.Common, s *sim.Scenario, v sim.Variant) *Model {
	if v == "" || !s.HasBroken() {
		v = sim.Correct
	}
	return &Model{c: c, scenario: s, variant: v, speed: 2, view: -1,
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

// WithDesign plays scenario s's world under design d, a design of the lab.
func WithDesign(c *common.Common, s *sim.Scenario, d sim.Switches) *Model {
	m := New(c, s, sim.Correct)
	m.design = &d
	return m
}

// designName is what the header says the design is: the variant, or the
// lab's switches.
func (m *Model) designName() string {
	if m.design != nil {
		return "lab: " + m.design.String()
	}
	return string(m.variant)
}

// Init starts the first run.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.start(), m.spin.Tick) }

// Title names the page.
func (m *Model) Title() string { return "Play: " + m.scenario.Title }

// Close stops the run on screen.
func (m *Model) Close() {
	if m.run != nil {
		m.run.Stop()
	}
}

// Report is the report of the run on screen once it has ended, else nil.
func (m *Model) Report() *sim.Report { return m.report }

// Stand is the scenario and variant on screen, for the next start to
// reopen too; under a design of the lab, no Place gives that play back:
// it is no place of its own to come back to, and the spot saved before
// stays.
func (m *Model) Stand() common.Stand {
	at := progress.Place{Page: progress.PagePlay, Name: m.scenario.Name, Variant: string(m.variant)}
	if m.design != nil {
		return common.Stand{At: at, Keep: true}
	}
	return common.Stand{At: at, Reopens: true, Next: at}
}

// switches reports whether v switches the design: only between the two
// variants of a scenario that has a broken one, not under a lab's design.
func (m *Model) switches() bool { return m.scenario.HasBroken() && m.design == nil }

// start stops the run on screen and begins a fresh one on fresh rows (a new
// schema).
func (m *Model) start() tea.Cmd {
	m.Close()
	m.phase, m.err, m.events, m.frames, m.pending, m.closed, m.report = phasePreparing, nil, nil, nil, false, false, nil
	m.view, m.countdown, m.lanes, m.queued, m.scroll = -1, 0, nil, 0, 0
	m.eventOf = map[int]int64{}
	m.run = m.c.Runs.Start(m.scenario, sim.Options{Variant: m.variant, Design: m.design, Trace: trace.Options{Stream: true, Gated: true}})
	r := m.run
	return func() tea.Msg {
		<-r.Prepared()
		return preparedMsg{run: r.ID()}
	}
}

func waitEvent(r *live.Run) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-r.Events()
		return traceMsg{run: r.ID(), ev: ev, closed: !ok}
	}
}

func waitDone(r *live.Run) tea.Cmd {
	return func() tea.Msg {
		<-r.Done()
		rep, err := r.Result()
		return doneMsg{run: r.ID(), report: rep, err: err}
	}
}

func (m *Model) fetchRows(frame int) tea.Cmd {
	r, ctx := m.run, m.c.Ctx
	return func() tea.Msg {
		rows, err := r.Rows(ctx)
		return rowsMsg{run: r.ID(), frame: frame, rows: rows, err: err}
	}
}

// current reports whether a message about run id is about the run on screen.
func (m *Model) current(id live.ID) bool { return m.run != nil && m.run.ID() == id }

// newest is the index of the newest frame, -1 before the first.
func (m *Model) newest() int { return len(m.frames) - 1 }

// Update follows the run (its preparation, its events, the rows after each
// step, its end) and the learner's keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		if m.phase != phasePreparing {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case preparedMsg:
		if !m.current(msg.run) {
			return nil
		}
		if err := m.run.Err(); err != nil {
			m.phase, m.err = phaseFailed, err
			return nil
		}
		setup := m.run.Setup()
		m.phase, m.seats, m.lanes, m.copies, m.eventCount = phaseRunning, setup.Seats, nil, setup.Copies, setup.Events
		for _, l := range m.run.Lanes() {
			m.lanes = append(m.lanes, seqdiag.Lane{ID: l.ID, Name: l.Name})
		}
		return tea.Batch(waitDone(m.run), waitEvent(m.run))
	case traceMsg:
		if !m.current(msg.run) {
			return nil
		}
		if msg.closed {
			m.closed = true
			return nil
		}
		m.events = append(m.events, msg.ev)
		if msg.ev.Kind == trace.KindSend && msg.ev.EventID != 0 {
			m.eventOf[msg.ev.Intent] = msg.ev.EventID
		}
		cmds := []tea.Cmd{waitEvent(m.run)}
		if msg.ev.Kind.IsStep() {
			following := m.view == m.newest()
			m.frames = append(m.frames, frame{ev: len(m.events) - 1})
			if following {
				m.view, m.scroll = m.newest(), 0
			}
			m.pending = true
			m.countdown = msg.ev.Delay
			cmds = append(cmds, m.fetchRows(m.newest()))
		}
		return tea.Batch(cmds...)
	case rowsMsg:
		if !m.current(msg.run) || msg.frame >= len(m.frames) {
			return nil
		}
		f := &m.frames[msg.frame]
		f.rows, f.rowsErr, f.loaded = msg.rows, msg.err, true
		if msg.frame == m.newest() {
			if m.queued > 0 && m.pending && m.view == m.newest() {
				m.queued--
				m.countdown = 0
				return m.release()
			}
			return m.schedule()
		}
	case advanceMsg:
		if !m.current(msg.run) || msg.token != m.timer || !m.playing {
			return nil
		}
		if m.view < m.last() {
			m.view, m.scroll = m.view+1, 0
			return m.schedule()
		}
		if !m.pending {
			return nil
		}
		if m.countdown > 0 {
			m.countdown -= time.Duration(float64(countdownTick) * speeds[m.speed])
			if m.countdown > 0 {
				return m.tick(countdownTick)
			}
			m.countdown = 0
		}
		return m.release()
	case doneMsg:
		if !m.current(msg.run) {
			return nil
		}
		if msg.err != nil {
			m.phase, m.err = phaseFailed, msg.err
			return nil
		}
		m.phase, m.report = phaseFinished, msg.report
		if m.view == m.newest() {
			// The learner let the last step go: the run's summary.
			m.playing, m.view, m.scroll = false, m.summary(), 0
		}
	case common.Step:
		return m.forward()
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scrollUp(1)
		case tea.MouseWheelDown:
			m.scrollDown(1)
		}
	}
	return nil
}

// scrollUp moves what the frame scrolls n lines towards its top: the
// diagram's scroll counts lines up from the newest, the diagnosis's lines
// down from its verdict (see diagnosisView); the views clamp it.
func (m *Model) scrollUp(n int) {
	if m.atDiagnosis() {
		m.scroll = max(0, m.scroll-n)
	} else {
		m.scroll += n
	}
}

// scrollDown moves it n lines towards its end.
func (m *Model) scrollDown(n int) {
	if m.atDiagnosis() {
		m.scroll += n
	} else {
		m.scroll = max(0, m.scroll-n)
	}
}

// The frames after the steps of a finished run: the summary (the whole
// story and the verdict), then, for a run whose design broke, the
// diagnosis (the verdict whole, with where to look and the fix).
func (m *Model) summary() int   { return len(m.frames) }
func (m *Model) diagnosis() int { return len(m.frames) + 1 }

func (m *Model) atSummary() bool {
	return m.phase == phaseFinished && m.report != nil && m.view == m.summary()
}
func (m *Model) atDiagnosis() bool {
	return m.phase == phaseFinished && m.report != nil && m.view == m.diagnosis()
}

// hasDiagnosis reports whether the finished run has a diagnosis frame.
func (m *Model) hasDiagnosis() bool {
	v := m.report.Verdict
	return v != nil && (!v.Held || v.Diagnosis != nil)
}

// last is the last frame there is now.
func (m *Model) last() int {
	switch {
	case m.phase != phaseFinished || m.report == nil:
		return m.newest()
	case m.hasDiagnosis():
		return m.diagnosis()
	}
	return m.summary()
}

// forward shows the next kept frame, or, at the newest, lets the engine take
// its next step once the rows after this one are read (a press that comes
// before that is kept for it, as is one before the next step arrives).
func (m *Model) forward() tea.Cmd {
	if m.view < m.last() {
		m.view, m.scroll = m.view+1, 0
		return m.schedule()
	}
	if !m.pending || !m.frames[m.newest()].loaded {
		if m.phase == phaseRunning || m.phase == phasePreparing {
			m.queued++ // kept for the step to come, also of a run still being prepared (r, v)
		}
		return nil
	}
	m.countdown = 0
	return m.release()
}

// release lets the held step of the engine go on.
func (m *Model) release() tea.Cmd {
	if !m.pending || m.run == nil {
		return nil
	}
	m.pending = false
	r := m.run
	return func() tea.Msg {
		_ = r.Release() // fails only when the run has ended or was stopped
		return releasedMsg{}
	}
}

// schedule arms the autoplay timer: the next kept frame after a pause, or the
// engine's next step once the newest frame's rows are in. A newer timer
// replaces any older one.
func (m *Model) schedule() tea.Cmd {
	pause := time.Duration(float64(stepPause) / speeds[m.speed])
	switch {
	case !m.playing:
		return nil
	case m.view < m.last():
		return m.tick(pause)
	case !m.pending || !m.frames[m.newest()].loaded:
		return nil // the next frame's arrival schedules
	case m.countdown > 0:
		return m.tick(countdownTick)
	}
	return m.tick(pause)
}

func (m *Model) tick(d time.Duration) tea.Cmd {
	m.timer++
	id, token := m.run.ID(), m.timer
	return tea.Tick(d, func(time.Time) tea.Msg { return advanceMsg{run: id, token: token} })
}

// The diagram's scroll keys, as the overlay names them.
