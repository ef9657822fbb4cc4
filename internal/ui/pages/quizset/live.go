package quizset

// A live question (Break it): its symptom's run, the cause and the place
// picked, then the run of the other design beside it.

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// liveState is the progress of a live question: the run of the symptom,
// the learner's cause and place, then the run beside it.
type liveState struct {
	symptomRun    *live.Run
	besideRun     *live.Run
	running       bool
	symptom       *quiz.Symptom
	beside        *quiz.Symptom
	err           error
	cause, where  int
	causeChosen   bool
	besideRunning bool
}

// liveMsg is the symptom of a live run; beside says which of the two runs.
type liveMsg struct {
	run     live.ID
	beside  bool
	symptom quiz.Symptom
	err     error
}

// runLive runs the question's scenario (the symptom, or the run beside it)
// to its end.
func (m *Model) runLive(beside bool) tea.Cmd {
	q := m.q()
	v := q.Live.Variant
	if beside {
		v = q.Live.Beside
	}
	r, cmd, err := m.startRun(q.Live.Scenario, sim.Options{Variant: v}, func(run live.ID, rep *sim.Report, err error) tea.Msg {
		if err != nil {
			return liveMsg{run: run, beside: beside, err: err}
		}
		return liveMsg{run: run, beside: beside, symptom: quiz.SymptomOf(rep)}
	})
	if err != nil {
		m.live.err = err
		return nil
	}
	if beside {
		m.live.besideRun, m.live.besideRunning = r, true
	} else {
		m.live.symptomRun, m.live.running = r, true
	}
	return cmd
}

// liveView is a live question: the run, the cause, where to look, the run
// beside it.
func (m *Model) liveView(q quiz.Question) string {
	st := m.c.Styles
	var b strings.Builder
	name := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Variant)
	switch {
	case m.live.running:
		b.WriteString(m.runningLine(m.live.symptomRun, "running it on PostgreSQL…")) // the scenario's name would give the cause away
		return b.String()
	case m.live.symptom == nil:
		b.WriteString(st.Warn.Render(m.prose("This question runs the design live on PostgreSQL, which is not available here. "+
			"Esc goes back; `learn doctor` says how to get one.")) + "\n")
		return b.String()
	}
	// Until both picks are made the run shows only its evidence, the
	// symptom as a user would see it: its name and its tally of keys would
	// say the cause.
	if m.answered {
		b.WriteString(st.BoxTitle.Render("Live run ("+name+"):") + "\n" + symptomLines(*m.live.symptom, m.c.Width) + "\n")
	} else {
		b.WriteString(st.BoxTitle.Render("What the run showed:") + "\n" + evidenceLines(*m.live.symptom, m.c.Width) + "\n")
	}
	if !m.live.causeChosen {
		b.WriteString(st.Subtle.Render("What causes it?") + "\n")
		b.WriteString(m.choicesView(q.Choices, m.shown, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Cause", q.Choices, q.Correct[0], m.live.cause, m.answered))
	if !m.answered {
		b.WriteString("\n" + st.Subtle.Render("Where do you look?") + "\n")
		b.WriteString(m.choicesView(q.Live.Where, m.whereShown, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Where", q.Live.Where, q.Live.WhereCorrect, m.live.where, true))
	besideName := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Beside)
	switch {
	case m.live.besideRunning:
		b.WriteString("\n" + m.runningLine(m.live.besideRun, "running "+besideName+" beside it…"))
	case m.live.beside != nil:
		b.WriteString("\n" + st.BoxTitle.Render("Beside it ("+besideName+"):") + "\n" + symptomLines(*m.live.beside, m.c.Width) + "\n")
		if q.Live.BesideNote != "" {
			b.WriteString(m.prose(q.Live.BesideNote) + "\n")
		}
	}
	return b.String()
}

// pickLine is the learner's pick, marked right or wrong once answered,
// with the right one after a wrong pick.
func (m *Model) pickLine(label string, choices []string, right, picked int, answered bool) string {
	st := m.c.Styles
	line := common.Hang(st.Subtle.Render(label+": "), choices[picked], m.c.Width-2)
	switch {
	case !answered:
	case picked == right:
		line += st.Good.Render(" ✓")
	default:
		line += st.Bad.Render(" ✗") + "\n" + common.Hang(st.Subtle.Render(strings.Repeat(" ", len(label)-2)+"it was: "), choices[right], m.c.Width-2)
	}
	return line + "\n"
}

// evidenceLines shows what a run shows before its cause is named
// (quiz.Symptom.Evidence), wrapped, never cut.
func evidenceLines(s quiz.Symptom, w int) string {
	lines := s.Evidence()
	for i, l := range lines {
		lines[i] = common.Hang("  ", l, w)
	}
	return strings.Join(lines, "\n")
}

// symptomLines shows a run's numbers, keys included, once the question is
// answered.
func symptomLines(s quiz.Symptom, w int) string {
	statuses := make([]string, len(s.Statuses))
	for i, st := range s.Statuses {
		statuses[i] = fmt.Sprint(st)
	}
	lines := []string{
		fmt.Sprintf("  answers %s · %d lost · %s, %s, %s", strings.Join(statuses, " "), s.Lost,
			common.Count(s.Intents, "intent"), common.Count(s.Keys, "key"), common.Count(s.Tries, "try")),
		fmt.Sprintf("  %s · %d seats taken", common.Count(s.Rows, "booking row"), s.Seats),
	}
	for _, msg := range s.Messages {
		lines = append(lines, "  message: "+msg)
	}
	if len(s.Broken) > 0 {
		lines = append(lines, "  invariants broken: "+strings.Join(s.Broken, "; "))
	} else {
		lines = append(lines, "  every invariant holds")
	}
	for i, l := range lines {
		lines[i] = common.Hang("  ", strings.TrimPrefix(l, "  "), w) // wrapped, never cut
	}
	return strings.Join(lines, "\n")
}
