package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

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
// Every step's frame (its event and the rows read after it) is kept, so
// stepping back shows exactly what was shown, without running again.
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
	view    int  // the frame on screen; -1 before the first
	pending bool // the newest step waits for release
	queued  int  // forward presses not yet spent: each releases one more step
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
	return &playModel{c: c, scenario: s, variant: sim.Correct, speed: 2, view: -1,
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

func (m *playModel) Init() tea.Cmd { return tea.Batch(m.start(), m.spin.Tick) }

// start begins a fresh run on fresh rows (a new schema).
func (m *playModel) start() tea.Cmd {
	m.stopRun()
	m.gen++
	m.phase, m.err, m.events, m.frames, m.pending, m.closed, m.report = phaseWaitDB, nil, nil, nil, false, false, nil
	m.view, m.countdown, m.laneSet, m.queued = -1, 0, nil, 0
	if m.c.dbErr != nil {
		m.phase, m.err = phaseFailed, m.c.dbErr
		return nil
	}
	if !m.c.dbReady {
		return nil // dbReadyMsg calls start again
	}
	m.phase = phasePreparing
	return prepare(m.gen, m.c, m.scenario, sim.Options{Variant: m.variant, Trace: sim.TraceOptions{Stream: true, Gated: true}})
}

// prepare builds a run in the background.
func prepare(gen int, c *common, s *sim.Scenario, opts sim.Options) tea.Cmd {
	srv := c.srv
	return func() tea.Msg {
		ctx, cancel := context.WithCancel(context.Background())
		run, err := s.Prepare(ctx, sim.DatabaseOf(srv.NewSchema), opts)
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

// newest is the index of the newest frame, -1 before the first.
func (m *playModel) newest() int { return len(m.frames) - 1 }

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
			following := m.view == m.newest()
			m.frames = append(m.frames, frame{ev: len(m.events) - 1})
			if following {
				m.view = m.newest()
			}
			m.pending = true
			m.countdown = msg.ev.Delay
			cmds = append(cmds, fetchRows(m.gen, m.newest(), m.live))
		}
		return m, tea.Batch(cmds...)
	case rowsMsg:
		if msg.gen != m.gen || msg.frame >= len(m.frames) {
			return m, nil
		}
		f := &m.frames[msg.frame]
		f.rows, f.rowsErr, f.loaded = msg.rows, msg.err, true
		if msg.frame == m.newest() {
			if m.queued > 0 && m.pending && m.view == m.newest() {
				m.queued--
				m.countdown = 0
				return m, m.release()
			}
			return m, m.schedule()
		}
	case advanceMsg:
		if msg.gen != m.gen || msg.token != m.timer || !m.playing {
			return m, nil
		}
		if m.view < m.newest() {
			m.view++
			return m, m.schedule()
		}
		if !m.pending {
			return m, nil
		}
		if m.countdown > 0 {
			m.countdown -= time.Duration(float64(countdownTick) * speeds[m.speed])
			if m.countdown > 0 {
				return m, m.tick(countdownTick)
			}
			m.countdown = 0
		}
		return m, m.release()
	case runDoneMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if msg.err != nil && m.phase == phaseRunning {
			m.phase, m.err = phaseFailed, msg.err
			return m, nil
		}
		m.phase, m.report = phaseFinished, msg.report
		if m.view == m.newest() {
			m.playing = false
		}
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
		if m.phase == phaseFinished && m.view == m.newest() {
			m.playing = true
			return m, m.start()
		}
		m.playing = !m.playing
		return m, m.schedule()
	case key.Matches(msg, k.Step):
		return m, m.forward()
	case key.Matches(msg, k.StepBack):
		if m.view > 0 {
			m.view--
		}
		m.playing = false
		return m, nil
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

// forward shows the next kept frame, or, at the newest, lets the engine take
// its next step (a press that comes before that step is kept for it).
func (m *playModel) forward() tea.Cmd {
	if m.view < m.newest() {
		m.view++
		return m.schedule()
	}
	if !m.pending {
		if m.phase == phaseRunning {
			m.queued++
		}
		return nil
	}
	m.countdown = 0
	return m.release()
}

// release lets the waiting step of the engine go on.
func (m *playModel) release() tea.Cmd {
	if !m.pending || m.live == nil {
		return nil
	}
	m.pending = false
	return release(m.live)
}

// schedule arms the autoplay timer: the next kept frame after a pause, or the
// engine's next step once the newest frame's rows are in. A newer timer
// replaces any older one.
func (m *playModel) schedule() tea.Cmd {
	pause := time.Duration(float64(stepPause) / speeds[m.speed])
	switch {
	case !m.playing:
		return nil
	case m.view < m.newest():
		return m.tick(pause)
	case !m.pending || !m.frames[m.newest()].loaded:
		return nil // the next frame's arrival schedules
	case m.countdown > 0:
		return m.tick(countdownTick)
	}
	return m.tick(pause)
}

func (m *playModel) tick(d time.Duration) tea.Cmd {
	m.timer++
	gen, token := m.gen, m.timer
	return tea.Tick(d, func(time.Time) tea.Msg { return advanceMsg{gen: gen, token: token} })
}

func (m *playModel) bindings() bindings {
	k := m.c.keys
	k.Variant.SetEnabled(m.scenario.HasBroken()) // a copy: the shared map stays whole
	return bindings{
		short: []key.Binding{k.Play, k.Step, k.StepBack, k.Restart, k.Variant, k.Faster, k.Slower, k.Back, k.Help},
		full: [][]key.Binding{
			{k.Play, k.Step, k.StepBack, k.Restart, k.Variant},
			{k.Faster, k.Slower, k.Present},
			{k.Back, k.Help, k.Quit},
		},
	}
}

// countOf is "1 booking row" or "2 booking rows", "2 tries".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && !strings.HasSuffix(stem, "e") && !strings.HasSuffix(stem, "a") {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ellipsis ends a progress line with one "…".
func ellipsis(s string) string { return strings.TrimRight(s, ".…") + "…" }
