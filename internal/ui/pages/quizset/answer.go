package quizset

// This file takes the keys of a question and grades the answer: moving
// over the options, ticking, ordering, typing, submitting, and what the
// learner picked as Answered tells it.

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/textbox"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// Capturing reports whether the screen takes every key (a short answer
// being written).
func (m *Model) Capturing() bool { return !m.done && m.typing }

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	if m.done {
		switch {
		case key.Matches(msg, k.Back, k.Open):
			return common.BackCmd
		case key.Matches(msg, k.Restart):
			// A new attempt: a new seed, so its choices come in a new order.
			m.done, m.idx, m.results = false, 0, make([]*quiz.Result, len(m.set.Questions))
			m.seed = time.Now().UnixNano()
			return m.begin()
		}
		return nil
	}
	m.hint = ""
	if !m.typing && m.scroll.Key(msg) {
		return nil
	}
	q := m.q()
	if m.typing {
		done, cmd := textbox.Type(&m.text, msg)
		m.typing = !done
		if done { // the text and the model answer, above the points to tick
			m.scroll.Top()
			m.reveal = true
		}
		return cmd
	}
	switch {
	case key.Matches(msg, k.Back):
		return common.BackCmd
	case m.answered && key.Matches(msg, k.Open):
		return m.next()
	case m.answered:
		return nil
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(+1)
	case q.Kind == quiz.KindOrder && key.Matches(msg, k.MoveUp):
		m.swap(-1)
	case q.Kind == quiz.KindOrder && key.Matches(msg, k.MoveDown):
		m.swap(+1)
	case len(q.Frames) > 0 && key.Matches(msg, blankKeys.Prev):
		m.blank = max(m.blank-1, 0)
	case len(q.Frames) > 0 && key.Matches(msg, blankKeys.Next):
		m.blank = min(m.blank+1, len(m.fills[m.order[m.cursor]])-1)
	case len(q.Frames) > 0 && key.Matches(msg, blankKeys.Fill):
		m.fillNext()
	case key.Matches(msg, k.Toggle) && q.Kind == quiz.KindMultiple:
		item := m.shown.Item(m.cursor)
		m.picked[item] = !m.picked[item]
	case key.Matches(msg, k.Toggle) && q.Kind == quiz.KindShort:
		m.ticked[m.cursor] = !m.ticked[m.cursor]
	case key.Matches(msg, k.Open):
		return m.submit()
	}
	return nil
}

// options is how many lines the cursor moves over.
func (m *Model) options() int {
	q := m.q()
	switch q.Kind {
	case quiz.KindOrder:
		return len(q.Steps)
	case quiz.KindShort:
		return len(q.Points)
	case quiz.KindLive:
		if m.live.causeChosen {
			return len(q.Live.Where)
		}
	case quiz.KindPredict:
		if m.pred.slot < len(q.Predict.Slots) {
			return len(q.Predict.Slots[m.pred.slot].Choices)
		}
		return 0
	}
	return len(q.Choices)
}

func (m *Model) move(d int) {
	if n := m.options(); n > 0 {
		m.cursor = (m.cursor + d + n) % n
	}
	m.reveal = m.q().Kind == quiz.KindShort
	m.blank = 0 // a row's blanks are filled from its first
}

// swap moves the step under the cursor up (-1) or down (+1).
func (m *Model) swap(d int) {
	j := m.cursor + d
	if j < 0 || j >= len(m.order) {
		return
	}
	m.order[m.cursor], m.order[j] = m.order[j], m.order[m.cursor]
	m.cursor = j
}

// NothingTicked is what enter says on a question of several answers with
// none ticked: it grades nothing.
const NothingTicked = "Nothing ticked yet: tick at least one with space, then enter."

// submit grades the answer on screen (for a live question: first the cause,
// then where to look), saves it, and shows the explanation.
func (m *Model) submit() tea.Cmd {
	q := m.q()
	var res quiz.Result
	var err error
	switch q.Kind {
	case quiz.KindSingle:
		res, err = quiz.GradeChoice(q, []int{m.shown.Item(m.cursor)})
	case quiz.KindMultiple:
		var picks []int
		for i := range q.Choices {
			if m.picked[i] {
				picks = append(picks, i)
			}
		}
		if len(picks) == 0 {
			m.hint = NothingTicked
			return nil
		}
		res, err = quiz.GradeChoice(q, picks)
	case quiz.KindOrder:
		var fills [][]int
		if len(q.Frames) > 0 {
			if n := m.emptyBlanks(); n > 0 {
				m.hint = fmt.Sprintf("%s still empty: space fills the one under the cursor, ←/→ go from blank to blank.", common.Count(n, "blank"))
				return nil
			}
			for _, step := range m.order {
				fills = append(fills, m.fills[step])
			}
		}
		res, err = quiz.GradeOrder(q, m.order, fills)
	case quiz.KindShort:
		res, err = quiz.GradeShort(q, m.text.Value(), m.ticked)
		m.scroll.Reset() // the verdict, at the end
	case quiz.KindLive:
		if m.live.symptom == nil {
			return nil // the run is not in yet
		}
		if !m.live.causeChosen {
			m.live.cause, m.live.causeChosen, m.cursor = m.shown.Item(m.cursor), true, 0
			return nil
		}
		m.live.where = m.whereShown.Item(m.cursor)
		res, err = quiz.GradeLive(q, m.live.cause, m.live.where)
	case quiz.KindPredict:
		return m.predictNext() // graded when its run is in
	}
	if err != nil {
		m.live.err = err
		return nil
	}
	return m.answer(res)
}

// answer shows res as the grade of the question on screen, saves it and
// tells it; a live question's run beside it starts.
func (m *Model) answer(res quiz.Result) tea.Cmd {
	q := m.q()
	m.answered, m.result = true, res
	m.results[m.idx] = &res
	set, id, score := m.set.ID, q.ID, res.Score
	next := m.idx + 1
	told := common.Answered{Set: set, Question: id, Picks: m.picks(), Score: score}
	cmds := []tea.Cmd{m.c.Progress.Save(func(p *progress.Progress) {
		p.Record(set, id, score, common.Now())
		p.Set(set).Next = next
		p.Resume = progress.Place{Page: progress.PageQuiz, Name: set, Step: next}
	}), func() tea.Msg { return told }}
	if q.Kind == quiz.KindLive {
		cmds = append(cmds, m.runLive(true))
	}
	return tea.Batch(cmds...)
}

// picks is what the learner picked on the question on screen, as Answered
// tells it.
func (m *Model) picks() []int {
	var out []int
	switch m.q().Kind {
	case quiz.KindSingle:
		out = []int{m.shown.Item(m.cursor)}
	case quiz.KindMultiple:
		for i := range m.q().Choices {
			if m.picked[i] {
				out = append(out, i)
			}
		}
	case quiz.KindOrder:
		out = append(out, m.order...)
	case quiz.KindShort:
		for i, on := range m.ticked {
			if on {
				out = append(out, i)
			}
		}
	case quiz.KindLive:
		out = []int{m.live.cause}
	case quiz.KindPredict:
		out = append(out, m.pred.picks...)
	}
	return out
}
