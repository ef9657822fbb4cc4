// Package quizset asks the questions of one quiz set (Checkpoint, Break
// it, Predict then run, Redraw it) one at a time, grades each with package
// quiz, saves every answer and, at the end, the attempt's score. A Break-it
// question runs its broken design live on PostgreSQL first, then the other
// design beside it; a predict question takes the learner's prediction,
// then runs its scenario live and grades the prediction from the run's
// report (predict.go). Every list of choices comes in a new order on every
// attempt; the cursor is a position, grades take the question's indices.
package quizset

import (
	"hash/fnv"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/scroller"
	"github.com/learn-idempotency/learn/internal/ui/components/textbox"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// Model asks the questions of one set (Checkpoint, Break it, Redraw it)
// one at a time, grades each with package quiz, saves every answer and, at
// the end, the attempt's score.
type Model struct {
	c       *common.Common
	set     quiz.Set
	idx     int
	results []*quiz.Result
	done    bool // the summary is shown

	finishOnInit bool // every question was answered before: open on the summary

	// seed shuffles the choices of this attempt; lastShown is the order
	// each list was shown in on the attempt before (by question ID and
	// list), so that a retake shows another.
	seed      int64
	lastShown map[string]quiz.Shown

	pred predictState

	// The state of the question on screen. The cursor is a position on
	// screen; picked, live.cause and live.where are the question's own
	// indices (what the graders and the saved answer take).
	answered   bool
	result     quiz.Result
	cursor     int
	picked     map[int]bool
	shown      quiz.Shown // single, multiple: the choices; live: the causes
	whereShown quiz.Shown // live: the places to look
	order      []int      // order: the learner's arrangement, indices into Steps
	// An order question with frames: fills[step][b] is the choice picked
	// for blank b of that step (-1 while empty), so a step keeps its
	// blanks when it moves; blankShown the order space goes through a
	// blank's choices in; blank the blank under the cursor in its row.
	fills      [][]int
	blankShown [][]quiz.Shown
	blank      int
	text       textbox.Model
	textReady  bool // text was made (the zero textarea must not be used)
	typing     bool // Short: the learner is still writing
	ticked     []bool
	live       liveState
	spin       spinner.Model
	// The question may be taller than the window: it scrolls under its
	// title line. While a short answer's points are ticked the body is
	// held at its top, scrolled only to keep the point under the cursor
	// in view (lines keepFrom to keepTo, found when the body is drawn) on
	// the next view after it moved (reveal).
	scroll           scroller.Model
	reveal           bool
	keepFrom, keepTo int
	// hint says why the last key did nothing (enter with nothing
	// ticked); any other key clears it.
	hint string
}

// New asks the questions of set from question start on (0: the first, or
// where an unfinished attempt stopped).
//
// An attempt whose every question was answered but that was left before
// its summary (Esc on the last answer: next is the set's length) opens on
// that summary and is finished there, with its score, rather than started
// again from the first question.
func New(c *common.Common, set quiz.Set, start int) *Model {
	sp, ok := c.Progress.Get().Sets[set.ID]
	switch {
	case ok && start == 0 && sp.Next == len(set.Questions) && len(sp.Answers) > 0:
		m := At(c, set, len(set.Questions))
		m.finishOnInit = true
		return m
	case ok && start == 0 && sp.Next < len(set.Questions):
		start = sp.Next // an unfinished attempt continues where it stopped
	}
	return At(c, set, start)
}

// At asks the questions of set from question step on (0 is the first),
// whatever an unfinished attempt stopped at: where the presenter sends
// the room.
func At(c *common.Common, set quiz.Set, step int) *Model {
	start := step
	m := &Model{c: c, set: set, results: make([]*quiz.Result, len(set.Questions)),
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)), scroll: scroller.New(),
		seed: time.Now().UnixNano(), lastShown: map[string]quiz.Shown{}}
	upto := min(max(start, 0), len(set.Questions)) // the questions answered before
	m.idx = min(upto, len(set.Questions)-1)
	// A resumed attempt keeps the scores of the questions answered before.
	if sp, ok := c.Progress.Get().Sets[set.ID]; ok {
		for i, q := range set.Questions[:upto] {
			if a, ok := sp.Answers[q.ID]; ok {
				r := quiz.Result{Score: a.Score, Correct: a.Score >= 1}
				m.results[i] = &r
			}
		}
	}
	return m
}

func (m *Model) q() quiz.Question { return m.set.Questions[m.idx] }

// Init sets up the question on screen.
func (m *Model) Init() tea.Cmd {
	if m.finishOnInit {
		return m.next() // m.idx is the last question: next finishes the attempt
	}
	return m.begin()
}

// Title names the page.
func (m *Model) Title() string { return m.set.Title }

// Close stops the live runs of the question on screen.
func (m *Model) Close() {
	for _, r := range []*live.Run{m.live.symptomRun, m.live.besideRun, m.pred.run} {
		if r != nil {
			r.Stop()
		}
	}
}

// Stand is the question on screen (the set's summary, once the attempt is
// over, is none to open again), and where the set continues: the question
// on screen until it is answered, then the next one (its answer is saved:
// asking it again would take a step back); nothing once the last one is
// answered or the attempt is over.
func (m *Model) Stand() common.Stand {
	s := common.Stand{At: progress.Place{Page: progress.PageQuiz, Name: m.set.ID, Step: m.idx}, Reopens: !m.done}
	next := m.idx
	if m.answered {
		next++
	}
	if !m.done && next < len(m.set.Questions) {
		s.Next = progress.Place{Page: progress.PageQuiz, Name: m.set.ID, Step: next}
	}
	return s
}

// begin resets the per-question state for question idx.
func (m *Model) begin() tea.Cmd {
	q := m.q()
	m.answered, m.result, m.cursor, m.picked, m.hint = false, quiz.Result{}, 0, map[int]bool{}, ""
	m.scroll.Reset()
	m.typing, m.ticked = false, nil
	m.Close()
	m.live, m.pred = liveState{}, predictState{}
	m.shown, m.whereShown = nil, nil
	switch q.Kind {
	case quiz.KindSingle, quiz.KindMultiple:
		m.shown = m.showOrder(q.ID, "choices", len(q.Choices))
	case quiz.KindOrder:
		m.order = m.showOrder(q.ID, "steps", len(q.Steps))
		m.beginFrames(q)
	case quiz.KindShort:
		m.text, m.textReady = textbox.New(m.c.Styles, "your answer, in a sentence or two (tab when done)", m.c.Width, 4), true
		m.typing = true
		m.ticked = make([]bool, len(q.Points))
		return m.text.Focus()
	case quiz.KindLive:
		m.shown = m.showOrder(q.ID, "causes", len(q.Choices))
		m.whereShown = m.showOrder(q.ID, "places", len(q.Live.Where))
		return m.runLive(false)
	case quiz.KindPredict:
		m.beginPredict(q)
	}
	return nil
}

// showOrder is the order in which list (of n items) of question id is
// shown on this attempt: shuffled by the attempt's seed, and never the
// order the attempt before showed (quiz.ShowOrder).
func (m *Model) showOrder(id, list string, n int) quiz.Shown {
	k := id + "\x00" + list
	h := fnv.New64a()
	_, _ = h.Write([]byte(k))
	s := quiz.ShowOrder(n, m.seed^int64(h.Sum64()), m.lastShown[k])
	m.lastShown[k] = append(quiz.Shown(nil), s...)
	return s
}

// Update grades, moves between questions, and takes the live runs' results.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case liveMsg:
		mine := m.live.symptomRun
		if msg.beside {
			mine = m.live.besideRun
		}
		if mine == nil || mine.ID() != msg.run {
			return nil
		}
		if msg.err != nil {
			m.live.err, m.live.running, m.live.besideRunning = msg.err, false, false
			return nil
		}
		s := msg.symptom
		if msg.beside {
			m.live.beside, m.live.besideRunning = &s, false
		} else {
			m.live.symptom, m.live.running = &s, false
		}
	case predictMsg:
		return m.predicted(msg)
	case spinner.TickMsg:
		if !m.live.running && !m.live.besideRunning && !m.pred.running {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case tea.WindowSizeMsg:
		if m.textReady {
			m.text.SetWidth(textbox.Width(msg.Width))
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.Capturing() {
			return textbox.Paste(&m.text, msg)
		}
	}
	return nil
}

// next goes to the next question, or to the summary after the last.
func (m *Model) next() tea.Cmd {
	if m.idx+1 < len(m.set.Questions) {
		m.idx++
		return m.begin()
	}
	m.done = true
	var rs []quiz.Result
	for _, r := range m.results {
		if r != nil {
			rs = append(rs, *r)
		}
	}
	set, score := m.set.ID, quiz.Score(rs)
	return m.c.Progress.Save(func(p *progress.Progress) {
		p.FinishAttempt(set, score)
		p.Resume = progress.Place{}
	})
}

// KeyMap is the keys of the question on screen.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	var short []key.Binding
	switch {
	case m.done:
		short = []key.Binding{k.Restart, k.Back}
	case m.typing:
		done := key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "done writing"))
		short = []key.Binding{done, k.Back}
	case m.answered:
		next := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next"))
		short = []key.Binding{next, scroller.Keys, k.Back}
	case m.q().Kind == quiz.KindLive && m.live.symptom == nil,
		m.q().Kind == quiz.KindPredict && m.pred.slot >= len(m.q().Predict.Slots):
		short = []key.Binding{k.Back}
	default:
		// Most important first (the footer drops from the end); the
		// root adds help and quit.
		what := "answer"
		if m.q().Kind == quiz.KindPredict {
			what = "predict"
		}
		short = []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", what))}
		switch m.q().Kind {
		case quiz.KindMultiple, quiz.KindShort:
			short = append(short, k.Toggle)
		case quiz.KindOrder:
			if len(m.q().Frames) > 0 {
				short = append(short, blankKeys.Fill, key.NewBinding(key.WithKeys("left", "right", "h", "l"), key.WithHelp("←/→", "blank")))
			}
			short = append(short, key.NewBinding(key.WithKeys(append(k.MoveUp.Keys(), k.MoveDown.Keys()...)...), key.WithHelp("K/J", "move step up/down")))
		}
		short = append(short, k.Up, k.Down, scroller.Keys, k.Back)
	}
	full := [][]key.Binding{short, {k.Help, k.Quit}}
	if !m.done && !m.typing && !m.answered && m.q().Kind == quiz.KindOrder {
		full = append(full, []key.Binding{k.MoveUp, k.MoveDown})
		if len(m.q().Frames) > 0 {
			full = append(full, []key.Binding{blankKeys.Fill, blankKeys.Prev, blankKeys.Next})
		}
	}
	return common.Bindings{Short: short, Full: full}
}
