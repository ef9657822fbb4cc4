package quizset

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// predictState is the progress of a predict question: the predictions
// made slot by slot, then the run of its scenario and its report.
type predictState struct {
	shown   []quiz.Shown // each slot's choices in the order shown
	slot    int          // the slot being predicted; len(slots) once all are
	picks   []int        // the choices picked, the slot's own indices
	run     *live.Run
	running bool
	rep     *sim.Report
	err     error
}

// predictMsg is the report of a predict question's run.
type predictMsg struct {
	run live.ID
	rep *sim.Report
	err error
}

// beginPredict sets up predict question q: each slot's choices shuffled.
func (m *Model) beginPredict(q quiz.Question) {
	for i, sl := range q.Predict.Slots {
		m.pred.shown = append(m.pred.shown, m.showOrder(q.ID, fmt.Sprintf("slot %d", i), len(sl.Choices)))
	}
}

// predictNext takes the choice under the cursor as the prediction of the
// slot on screen; after the last slot it runs the scenario.
func (m *Model) predictNext() tea.Cmd {
	q := m.q()
	if m.pred.slot >= len(q.Predict.Slots) {
		return nil // the run is under way
	}
	m.pred.picks = append(m.pred.picks, m.pred.shown[m.pred.slot].Item(m.cursor))
	m.pred.slot++
	m.cursor = 0
	if m.pred.slot < len(q.Predict.Slots) {
		return nil
	}
	r, cmd, err := m.startRun(q.Predict.Scenario, q.Predict.Options(), func(run live.ID, rep *sim.Report, err error) tea.Msg {
		return predictMsg{run: run, rep: rep, err: err}
	})
	if err != nil {
		m.pred.err = err
		return nil
	}
	m.pred.run, m.pred.running = r, true
	return cmd
}

// predicted grades the predictions from the run's report.
func (m *Model) predicted(msg predictMsg) tea.Cmd {
	if m.pred.run == nil || m.pred.run.ID() != msg.run || m.q().Kind != quiz.KindPredict {
		return nil
	}
	m.pred.running = false
	if msg.err != nil {
		m.pred.err = msg.err
		return nil
	}
	m.pred.rep = msg.rep
	res, err := quiz.GradePredict(m.q(), m.pred.picks, msg.rep)
	if err != nil {
		m.pred.err = err
		return nil
	}
	return m.answer(res)
}

// predictView is a predict question: the predictions made, the slot on
// screen with its choices; while it runs a spinner; then each prediction
// beside what the run had.
func (m *Model) predictView(q quiz.Question) string {
	st := m.c.Styles
	w := m.c.Width
	slots := q.Predict.Slots
	var b strings.Builder
	if m.pred.rep != nil {
		b.WriteString(st.BoxTitle.Render(fmt.Sprintf("You predicted, and the run (%s, %s design) had:", q.Predict.Scenario, q.Predict.Variant)) + "\n")
		for i, sl := range slots {
			mark := st.Bad.Render("✗ ")
			if m.result.Positions[i] {
				mark = st.Good.Render("✓ ")
			}
			b.WriteString(common.Hang(mark, sl.What, w) + "\n")
			line := "you said " + sl.Choices[m.pred.picks[i]] + " · the run: " + sl.Said(quiz.Measured(sl.Measure, m.pred.rep), m.pred.rep)
			b.WriteString(st.Subtle.Render(common.Hang("    ", line, w)) + "\n")
		}
		return b.String()
	}
	if len(m.pred.picks) > 0 {
		b.WriteString(st.Subtle.Render("Your prediction:") + "\n")
		for i, p := range m.pred.picks {
			b.WriteString(common.Hang("  ", slots[i].What+": "+slots[i].Choices[p], w) + "\n")
		}
		b.WriteString("\n")
	}
	switch {
	case m.pred.slot < len(slots):
		sl := slots[m.pred.slot]
		b.WriteString(st.Subtle.Render(fmt.Sprintf("Predict %d of %d: %s", m.pred.slot+1, len(slots), sl.What)) + "\n")
		b.WriteString(m.choicesView(sl.Choices, m.pred.shown[m.pred.slot], nil, false))
	case m.pred.running:
		b.WriteString(m.runningLine(m.pred.run, "running it on PostgreSQL…"))
	case m.pred.err != nil:
		b.WriteString(st.Warn.Render(m.prose("The run could not be made, so the prediction is not graded: "+m.pred.err.Error()+
			". Esc goes back; `learn doctor` says how to get a PostgreSQL.")) + "\n")
	}
	return b.String()
}
