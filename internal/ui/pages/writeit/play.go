package writeit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/panes"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/check"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// playView is a check row played live on the learner's code: the run is
// held at each step (each try learn's client sends, each statement of the
// learner's before PostgreSQL gets it, each answer) until the learner
// goes on (→ a step, space plays on; it opens held), and the rows committed while each step was held are kept with
// it, so stepping back shows what was shown.
type playView struct {
	id    int
	title string
	pb    *exercises.Playback

	steps   []playStep
	view    int  // the step on screen, -1 before the first
	pending bool // the newest step is held
	playing bool
	scroll  int // lines scrolled up from the step on screen

	done    bool // the run has ended: row, stopped and err are its result
	row     check.Row
	stopped string
	err     error
}

// playStep is one step, what its statement got back once it was let go
// and the first step on whose screen it shows (resultAt: the newest step
// when it came, or the one after when that one had been let go), and the
// rows read while it was held.
type playStep struct {
	ev       trace.Event
	result   string
	resultAt int
	rows     engine.Rows
	rowsErr  error
	loaded   bool
}

// Messages of a play; id says which play each is about.
type (
	playEventMsg struct {
		id     int
		ev     trace.Event
		closed bool
	}
	playRowsMsg struct {
		id, step int
		rows     engine.Rows
		err      error
	}
	playDoneMsg struct {
		id      int
		row     check.Row
		stopped string
		err     error
	}
	playTickMsg struct{ id int }
)

// playPace is how long a step stays on screen while playing.
const playPace = 900 * time.Millisecond

// openPlay plays the cursor's row live on the learner's code.
func (m *Model) openPlay() tea.Cmd {
	rows := m.rowsOf(m.sel)
	srv := m.c.DB.Server()
	if m.row < 0 || m.row >= len(rows) || srv == nil {
		return nil
	}
	m.closePlay()
	m.plays++
	r := rows[m.row]
	p := &playView{id: m.plays, title: r.Title, view: -1,
		pb: exercises.Play(m.c.Ctx, m.dir, srv, exercises.Ladder[m.sel], r.Name)}
	m.play = p
	return tea.Batch(p.waitEvent(), p.waitDone())
}

// closePlay stops the play on screen; what it made is removed in the
// background.
func (m *Model) closePlay() {
	if m.play != nil {
		go m.play.pb.Stop()
		m.play = nil
	}
}

func (p *playView) waitEvent() tea.Cmd {
	id, events := p.id, p.pb.Events()
	return func() tea.Msg {
		ev, ok := <-events
		return playEventMsg{id: id, ev: ev, closed: !ok}
	}
}

func (p *playView) waitDone() tea.Cmd {
	id, pb := p.id, p.pb
	return func() tea.Msg {
		row, stopped, err := pb.Result()
		return playDoneMsg{id: id, row: row, stopped: stopped, err: err}
	}
}

func (p *playView) fetchRows(ctx context.Context, i int) tea.Cmd {
	id, pb := p.id, p.pb
	return func() tea.Msg {
		rows, err := pb.Rows(ctx)
		return playRowsMsg{id: id, step: i, rows: rows, err: err}
	}
}

// release lets the newest step go on.
func (p *playView) release(ctx context.Context) tea.Cmd {
	if !p.pending {
		return nil
	}
	p.pending = false
	pb := p.pb
	return func() tea.Msg {
		_ = pb.Release(ctx) // fails only once the run has ended
		return nil
	}
}

func (p *playView) tick() tea.Cmd {
	id := p.id
	return tea.Tick(playPace, func(time.Time) tea.Msg { return playTickMsg{id: id} })
}

// newest is the index of the newest step, -1 before the first.
func (p *playView) newest() int { return len(p.steps) - 1 }

// forward shows the next step: one already seen, or the held one let go.
func (p *playView) forward(ctx context.Context) tea.Cmd {
	if p.view < p.newest() {
		p.view, p.scroll = p.view+1, 0
		return nil
	}
	return p.release(ctx)
}

// updatePlay takes a play's messages and keys; ok is false for a message
// that is not the play's.
func (m *Model) updatePlay(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	p := m.play
	switch msg := msg.(type) {
	case playEventMsg:
		if p == nil || msg.id != p.id || msg.closed {
			return nil, true
		}
		if !msg.ev.Kind.IsStep() {
			// What a statement got back: on its step.
			for i := len(p.steps) - 1; i >= 0; i-- {
				s := &p.steps[i]
				if s.ev.Kind == trace.KindStatement && s.ev.Intent == msg.ev.Intent && s.ev.Copy == msg.ev.Copy && s.ev.Try == msg.ev.Try && s.result == "" {
					// Come while the newest step is held, it is part of
					// that step; come after it was let go, of the next.
					s.result, s.resultAt = msg.ev.Text, p.newest()
					if !p.pending {
						s.resultAt++
					}
					break
				}
			}
			return p.waitEvent(), true
		}
		following := p.view == p.newest()
		p.steps = append(p.steps, playStep{ev: msg.ev})
		if following {
			p.view, p.scroll = p.newest(), 0
		}
		p.pending = true
		return tea.Batch(p.waitEvent(), p.fetchRows(m.c.Ctx, p.newest())), true
	case playRowsMsg:
		if p == nil || msg.id != p.id || msg.step >= len(p.steps) {
			return nil, true
		}
		s := &p.steps[msg.step]
		s.rows, s.rowsErr, s.loaded = msg.rows, msg.err, true
		if p.playing && msg.step == p.newest() {
			return p.tick(), true
		}
		return nil, true
	case playTickMsg:
		if p == nil || msg.id != p.id || !p.playing {
			return nil, true
		}
		if p.view < p.newest() {
			p.view, p.scroll = p.view+1, 0
			return p.tick(), true
		}
		return p.release(m.c.Ctx), true
	case playDoneMsg:
		if p == nil || msg.id != p.id {
			return nil, true
		}
		p.done, p.row, p.stopped, p.err, p.playing, p.pending = true, msg.row, msg.stopped, msg.err, false, false
		return nil, true
	case tea.KeyPressMsg:
		if p == nil {
			return nil, false
		}
		k := m.c.Keys
		switch {
		case key.Matches(msg, k.Back), msg.String() == "backspace":
			m.closePlay()
		case key.Matches(msg, keyPlay):
			p.playing = !p.playing && !p.done
			if p.playing && p.view < p.newest() {
				// A step already seen: the next, and on at the pace.
				p.view, p.scroll = p.view+1, 0
				return p.tick(), true
			}
			if p.playing {
				return p.release(m.c.Ctx), true
			}
		case key.Matches(msg, k.Step):
			p.playing = false
			return p.forward(m.c.Ctx), true
		case key.Matches(msg, k.StepBack):
			p.playing, p.view, p.scroll = false, max(p.view-1, 0), 0
		case key.Matches(msg, k.Top):
			p.playing, p.view, p.scroll = false, min(0, p.newest()), 0
		case key.Matches(msg, k.Bottom):
			p.playing, p.view, p.scroll = false, p.newest(), 0
		case key.Matches(msg, k.Up):
			p.scroll++
		case key.Matches(msg, k.Down):
			p.scroll = max(p.scroll-1, 0)
		}
		return nil, true
	}
	return nil, false
}

// playLines are the play drawn in w x h: its title and state, the steps
// up to the one on screen, and the rows committed while it was held.
func (m *Model) playLines(w, h int) []string {
	st, p := m.c.Styles, m.play
	out := []string{st.Title.Render(common.Truncate(p.title+" · live on your code", w))}
	var state string
	switch {
	case p.err != nil:
		state = st.Bad.Render("Could not play: " + p.err.Error())
	case p.stopped != "" && len(p.steps) > 0:
		state = st.Bad.Render(p.stopped) // stopped midway: it says so
	case p.stopped != "":
		state = st.Bad.Render("Nothing was played: " + p.stopped)
	case p.done && p.view == p.newest():
		state = p.row.State.Mark() + " " + check.Printable(p.row.Says)
	case len(p.steps) == 0:
		state = st.Subtle.Render("building your module and starting two API instances…")
	default:
		held := ""
		switch {
		case p.done:
			held = " · the run has ended: G goes to its verdict"
		case p.playing:
			held = " · playing: space pauses"
		case p.pending && p.view == p.newest():
			held = " · held: → lets it go, space plays on"
		case p.view == p.newest():
			held = " · let go: the next step comes"
		default:
			held = " · stepped back: → the next step, space plays on"
		}
		state = st.Subtle.Render(fmt.Sprintf("step %d of %d%s", p.view+1, len(p.steps), held))
	}
	out = append(out, wrap(state, w)...)
	if len(p.steps) == 0 || p.view < 0 {
		return out
	}
	paneH := min(max(h/3, 5), 9)
	var body []string
	for i := range p.view + 1 {
		prefix := "  "
		if i == p.view {
			prefix = st.Cursor.Render("› ")
		}
		body = append(body, strings.Split(common.Hang(prefix, p.stepText(st, i), w), "\n")...)
	}
	room := max(h-len(out)-paneH, 1)
	first := max(len(body)-room-min(p.scroll, max(len(body)-room, 0)), 0)
	out = append(out, body[first:min(first+room, len(body))]...)
	for len(out) < h-paneH {
		out = append(out, "")
	}
	s := p.steps[p.view]
	var lines []string
	switch {
	case !s.loaded:
		lines = []string{st.Subtle.Render("reading…")}
	case s.rowsErr != nil:
		lines = wrap(st.Bad.Render(s.rowsErr.Error()), w-4)
	default:
		seats := 0
		if first := p.steps[0].rows; len(first.Events) > 0 {
			seats = first.Events[0].SeatsLeft
		}
		lines = panes.Rows(st, s.rows, seats, w-4, paneH-3)
	}
	return append(out, strings.Split(panes.Box(st, fmt.Sprintf("Rows (committed) while step %d was held", p.view+1), lines, w, paneH), "\n")...)
}

// resultBy is what step i's statement got back by the end of the step
// on screen: "" when nothing had come by then, though it came later.
func (p *playView) resultBy(i int) string {
	if s := p.steps[i]; s.result != "" && s.resultAt <= p.view {
		return s.result
	}
	return ""
}

// waitsBy reports whether step i's statement, let go and not answered by
// the end of the step on screen, was waiting for a lock then: another
// statement went after it, and a play lets one go only when every
// request in flight is held at the gate, waits for a lock in PostgreSQL
// or for a connection, or after a moment in which nothing moved (a
// statement that runs long; exercises' turns).
func (p *playView) waitsBy(i int) bool {
	for k := i + 1; k <= p.view; k++ {
		if p.steps[k].ev.Kind == trace.KindStatement {
			return p.resultBy(i) == ""
		}
	}
	return false
}

// stepText is step i as its line says it while the step on screen is
// held: a try sent, a statement with what it had got back by then, or an
// answer.
func (p *playView) stepText(st *common.Styles, i int) string {
	s := p.steps[i]
	at := "#" + api.RequestID(trace.Attempt{Intent: s.ev.Intent, Copy: s.ev.Copy, Try: s.ev.Try})
	switch s.ev.Kind {
	case trace.KindStatement:
		text, result := s.ev.Text, p.resultBy(i)
		switch {
		case result != "":
			text += "  → " + result
		case i == p.view && (i < p.newest() || p.pending):
			text += "  · held, not sent yet" // the step on screen is the moment it was held
		case p.waitsBy(i):
			text += "  → no answer yet: it waits for a lock another transaction holds, or runs long"
		default:
			text += "  → no answer yet"
		}
		if strings.Contains(result, "crash") {
			return st.Bad.Render(text)
		}
		return st.SQLTag.Render(text)
	case trace.KindSend:
		return st.Caption.Render(at + " " + s.ev.From + " → " + s.ev.To + ": " + s.ev.Label)
	case trace.KindAnswer:
		if s.ev.Lost || s.ev.Status == 0 || s.ev.Status >= 500 {
			return st.Bad.Render(at + " " + s.ev.Text)
		}
		return st.Accent.Render(at + " " + s.ev.Text)
	}
	return at + " " + s.ev.Text
}
