// Package dashboard is the presenter's screen of a workshop: who is
// connected (name, terminal size, the screen each is on), their checkpoint
// and break-it scores, the poll of the open question drawn as bars, the
// PostgreSQL connections the room's runs hold, and a feed of what
// happened. From it the presenter sends everyone to a screen (o) and steps
// the room's play screens together (n).
//
// It reads the workshop's room (package room) and sends messages to the
// attendees' apps through it (common.Open, common.Step); it knows nothing
// of SSH.
package dashboard

import (
	"context"
	"fmt"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// Info is what the dashboard says about the workshop itself.
type Info struct {
	// Join are the commands to give the room, e.g. "ssh -p 2222 10.0.0.5".
	Join []string
	// Code is the join code attendees type at the password prompt.
	Code string
	// Budget is the PostgreSQL connections the attendees' runs share; nil
	// when there is none.
	Budget *live.Budget
	// Health, when set, is where the workshop's PostgreSQL stands: while
	// it is not up, the header says so instead of the connections.
	Health func() pgtemp.Health
}

// feedLines is how many lines of the feed the dashboard keeps.
const feedLines = 50

// Model is the presenter's dashboard.
type Model struct {
	c    *common.Common
	room *room.Room
	info Info
	snap room.Snapshot
	now  time.Time

	// The list of screens to send everyone to, while it is open.
	picking bool
	targets []target
	cursor  int
	// top is the first attendee row shown when they do not all fit.
	top  int
	note string // what the last action did, or why q does not quit
	// help: the full list of keys shows (?), in place of the room.
	help bool
}

// target is a screen the presenter can send everyone to; a quiz question
// also opens the poll on it.
type target struct {
	label       string
	open        common.Open
	set, answer string // the question the poll opens on, if any
}

// Messages of the dashboard.
type (
	changedMsg struct{}
	clockMsg   time.Time
)

// New is the dashboard of room.
func New(c *common.Common, r *room.Room, info Info) *Model {
	return &Model{c: c, room: r, info: info, targets: targets(), snap: r.Snapshot(feedLines), now: time.Now()}
}

// targets are the screens, in the order of a workshop: read, watch, the
// questions one by one, the rest of the scenarios.
func targets() []target {
	var ts []target
	for _, p := range lessons.All() {
		kind := "Lesson"
		if p.Kind == lessons.KindInterview {
			kind = "Interview card"
		}
		ts = append(ts, target{label: kind + ": " + p.Title, open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: p.Slug}}})
	}
	lost, _ := sim.Lookup("lost-answer")
	ts = append(ts,
		target{label: "Play: " + lost.Title, open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: lost.Name}}},
		target{label: "Race: N copies of one request at once", open: common.Open{Place: progress.Place{Page: progress.PageRace}}})
	for _, set := range quiz.Sets() {
		for i, q := range set.Questions {
			ts = append(ts, target{label: fmt.Sprintf("%s %d: %s", set.Title, i+1, q.Prompt),
				open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: set.ID, Step: i}, Exact: true}, set: set.ID, answer: q.ID})
		}
	}
	ts = append(ts, target{label: "Interview drill", open: common.Open{Place: progress.Place{Page: progress.PageDrill}}},
		target{label: "Design lab: build the endpoint from switches", open: common.Open{Place: progress.Place{Page: progress.PageLab}}},
		target{label: "Scenarios: the list of all", open: common.Open{Place: progress.Place{Page: progress.PagePicker}}})
	for _, s := range sim.Scenarios() {
		if s.Name == lost.Name {
			continue
		}
		ts = append(ts, target{label: "Play: " + s.Title, open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: s.Name}}})
		if s.HasBroken() {
			ts = append(ts, target{label: "Play: " + s.Title + " (broken)", open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: s.Name, Variant: string(sim.Broken)}}})
		}
	}
	return ts
}

// Init starts following the room and the clock.
func (m *Model) Init() tea.Cmd { return tea.Batch(waitChange(m.c.Ctx, m.room), tick()) }

// waitChange waits for the room to change, or for the app to end.
func waitChange(ctx context.Context, r *room.Room) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-r.Changed():
			return changedMsg{}
		case <-ctx.Done():
			return nil
		}
	}
}

func tick() tea.Cmd { return tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) }) }

// Title names the page.
func (m *Model) Title() string { return "Workshop" }

// Stand is the presenter's dashboard, on screen: no place of its own to come
// back to, so the spot saved before stays.
func (m *Model) Stand() common.Stand {
	return common.Stand{At: progress.Place{Page: progress.PageWorkshop}, Reopens: true, Keep: true}
}

// Capturing takes every key but Ctrl-C: q must not end a workshop by a slip.
func (m *Model) Capturing() bool { return true }

// Update follows the room and takes the presenter's keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case changedMsg:
		m.snap = m.room.Snapshot(feedLines)
		return waitChange(m.c.Ctx, m.room)
	case clockMsg:
		m.now = time.Time(msg)
		return tick()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// The dashboard's keys. The short hints say the essential first: how to
// end the workshop, then what the presenter does most.
var (
	keyEnd   = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "end the workshop"))
	keySend  = key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "send everyone to…"))
	keyClose = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "close the poll"))
	keyStep  = key.NewBinding(key.WithKeys("n", "right", "pgdown"), key.WithHelp("n", "step the play screens"))
	keyHelp  = key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys"))
	keyTable = key.NewBinding(key.WithKeys("up", "k", "down", "j"), key.WithHelp("↑/↓", "scroll the attendees"))
	keyPick  = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send everyone there"))
	keyMove  = key.NewBinding(key.WithKeys("up", "k", "down", "j"), key.WithHelp("↑/↓", "move"))
	keyDrop  = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	keyShut  = key.NewBinding(key.WithKeys("?", "esc"), key.WithHelp("? or esc", "back to the room"))
)

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	if m.picking {
		switch {
		case key.Matches(msg, k.Up):
			m.cursor = (m.cursor + len(m.targets) - 1) % len(m.targets)
		case key.Matches(msg, k.Down):
			m.cursor = (m.cursor + 1) % len(m.targets)
		case key.Matches(msg, k.Back):
			m.picking = false
		case key.Matches(msg, k.Open):
			m.picking = false
			m.send(m.targets[m.cursor])
		}
		return nil
	}
	if m.help {
		if key.Matches(msg, keyShut) {
			m.help = false
		}
		return nil
	}
	m.note = ""
	switch {
	case key.Matches(msg, keyHelp):
		m.help = true
	case key.Matches(msg, keySend):
		m.picking = true
	case key.Matches(msg, keyStep):
		if m.room.OnScreen(progress.PagePlay) == 0 {
			m.note = "nobody is on a play screen: o sends the room to one"
			break
		}
		m.room.SendOn(progress.PagePlay, common.Step{}, "stepped the play screens together")
	case key.Matches(msg, keyClose):
		if m.room.ClosePoll() == "" {
			m.note = "no poll to close: o opens one on a question"
		}
	case key.Matches(msg, k.Up):
		m.top = max(0, m.top-1)
	case key.Matches(msg, k.Down):
		m.top = min(m.top+1, max(0, len(m.snap.Attendees)-1))
	case msg.String() == "q":
		m.note = "q does not end a workshop: Ctrl-C does (every attendee is told)"
	}
	return nil
}

// send sends everyone to t, and opens the poll on t's question.
func (m *Model) send(t target) {
	if t.answer != "" {
		m.room.OpenPoll(t.set, t.answer)
	}
	m.room.SendAll(t.open, "sent everyone to "+cut(t.label, 40))
}

// KeyMap is the dashboard's keys.
func (m *Model) KeyMap() help.KeyMap {
	switch {
	case m.help:
		short := []key.Binding{keyEnd, keyShut}
		return common.Bindings{Short: short, Full: [][]key.Binding{short}}
	case m.picking:
		short := []key.Binding{keyEnd, keyMove, keyPick, keyDrop}
		return common.Bindings{Short: short, Full: [][]key.Binding{short}}
	}
	short := []key.Binding{keyEnd, keySend, keyClose, keyStep, keyHelp}
	return common.Bindings{Short: short, Full: fullKeys}
}

// fullKeys is every key of the dashboard, for ?: the room's, then those of
// the list of screens (o).
var fullKeys = [][]key.Binding{
	{keyEnd, keySend, keyClose, keyStep, keyTable, keyHelp},
	{keyMove, keyPick, keyDrop},
}

func count(n int, noun string) string { return common.Count(n, noun) }
