package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// quizModel asks the questions of one set (Checkpoint, Break it, Redraw it)
// one at a time, grades each with package quiz, saves every answer and, at
// the end, the attempt's score.
type quizModel struct {
	c       *common
	set     quiz.Set
	idx     int
	results []*quiz.Result
	done    bool // the summary is shown

	// The state of the question on screen.
	answered  bool
	result    quiz.Result
	cursor    int
	picked    map[int]bool
	order     []int // order: the learner's arrangement, indices into Steps
	text      textBox
	textReady bool // text was made (the zero textarea must not be used)
	typing    bool // short: the learner is still writing
	ticked    []bool
	live      liveState
	spin      spinner.Model
	// The question may be taller than the window: it scrolls under its
	// title line.
	scroll scroller
}

// liveState is the progress of a live question: the run of the symptom,
// the learner's cause and place, then the run beside it.
type liveState struct {
	gen           int
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
	gen     int
	beside  bool
	symptom quiz.Symptom
	err     error
}

func newQuiz(c *common, set quiz.Set, start int) *quizModel {
	m := &quizModel{c: c, set: set, results: make([]*quiz.Result, len(set.Questions)),
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)), scroll: newScroller()}
	m.idx = min(max(start, 0), len(set.Questions)-1)
	// A resumed attempt keeps the scores of the questions answered before.
	if sp, ok := c.prog.Sets[set.ID]; ok {
		for i, q := range set.Questions[:m.idx] {
			if a, ok := sp.Answers[q.ID]; ok {
				r := quiz.Result{Score: a.Score, Correct: a.Score >= 1}
				m.results[i] = &r
			}
		}
	}
	return m
}

func (m *quizModel) q() quiz.Question { return m.set.Questions[m.idx] }

// Init sets up the question on screen.
func (m *quizModel) Init() tea.Cmd { return m.begin() }

// begin resets the per-question state for question idx.
func (m *quizModel) begin() tea.Cmd {
	q := m.q()
	m.answered, m.result, m.cursor, m.picked = false, quiz.Result{}, 0, map[int]bool{}
	m.scroll.reset()
	m.typing, m.ticked = false, nil
	m.live = liveState{gen: m.live.gen + 1}
	switch q.Kind {
	case quiz.KindOrder:
		m.order = quiz.Shuffle(len(q.Steps), time.Now().UnixNano())
	case quiz.KindShort:
		m.text, m.textReady = newTextBox("your answer, in a sentence or two (tab when done)", m.c.width, 4), true
		m.typing = true
		m.ticked = make([]bool, len(q.Points))
		return m.text.Focus()
	case quiz.KindLive:
		return m.runLive(false)
	}
	return nil
}

// runLive runs the question's scenario (the symptom, or the run beside it).
func (m *quizModel) runLive(beside bool) tea.Cmd {
	q := m.q()
	if !m.c.dbReady {
		if m.c.dbErr != nil {
			m.live.err = m.c.dbErr
		}
		return nil // dbReadyMsg starts it
	}
	v := q.Live.Variant
	if beside {
		v, m.live.besideRunning = q.Live.Beside, true
	} else {
		m.live.running = true
	}
	gen, srv, scenario := m.live.gen, m.c.srv, q.Live.Scenario
	return tea.Batch(m.spin.Tick, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		runs := live.NewRuns(ctx, live.Existing(srv))
		defer runs.Close()
		sc, err := sim.Lookup(scenario)
		if err != nil {
			return liveMsg{gen: gen, beside: beside, err: err}
		}
		r := runs.Start(sc, sim.Options{Variant: v})
		<-r.Done()
		rep, err := r.Result()
		if err != nil {
			return liveMsg{gen: gen, beside: beside, err: err}
		}
		return liveMsg{gen: gen, beside: beside, symptom: quiz.SymptomOf(rep)}
	})
}

func (m *quizModel) Update(msg tea.Msg) (*quizModel, tea.Cmd) {
	switch msg := msg.(type) {
	case dbReadyMsg:
		if !m.done && m.q().Kind == quiz.KindLive && m.live.symptom == nil && !m.live.running {
			return m, m.runLive(false)
		}
	case liveMsg:
		if msg.gen != m.live.gen {
			return m, nil
		}
		if msg.err != nil {
			m.live.err, m.live.running, m.live.besideRunning = msg.err, false, false
			return m, nil
		}
		s := msg.symptom
		if msg.beside {
			m.live.beside, m.live.besideRunning = &s, false
		} else {
			m.live.symptom, m.live.running = &s, false
		}
	case spinner.TickMsg:
		if !m.live.running && !m.live.besideRunning {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case tea.WindowSizeMsg:
		if m.textReady {
			m.text.SetWidth(textWidth(msg.Width))
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// capturing reports whether the screen takes every key (a short answer
// being written).
func (m *quizModel) capturing() bool { return !m.done && m.typing }

func (m *quizModel) key(msg tea.KeyPressMsg) (*quizModel, tea.Cmd) {
	k := m.c.keys
	if m.done {
		switch {
		case key.Matches(msg, k.Back, k.Open):
			return m, back
		case key.Matches(msg, k.Restart):
			m.done, m.idx, m.results = false, 0, make([]*quiz.Result, len(m.set.Questions))
			return m, m.begin()
		}
		return m, nil
	}
	if !m.typing && m.scroll.key(msg, k) {
		return m, nil
	}
	q := m.q()
	if m.typing {
		done, cmd := typeInto(&m.text, msg)
		m.typing = !done
		return m, cmd
	}
	switch {
	case key.Matches(msg, k.Back):
		return m, back
	case m.answered && key.Matches(msg, k.Open):
		return m, m.next()
	case m.answered:
		return m, nil
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(+1)
	case q.Kind == quiz.KindOrder && key.Matches(msg, k.MoveUp):
		m.swap(-1)
	case q.Kind == quiz.KindOrder && key.Matches(msg, k.MoveDown):
		m.swap(+1)
	case key.Matches(msg, k.Toggle) && q.Kind == quiz.KindMultiple:
		m.picked[m.cursor] = !m.picked[m.cursor]
	case key.Matches(msg, k.Toggle) && q.Kind == quiz.KindShort:
		m.ticked[m.cursor] = !m.ticked[m.cursor]
	case key.Matches(msg, k.Open):
		return m, m.submit()
	}
	return m, nil
}

// options is how many lines the cursor moves over.
func (m *quizModel) options() int {
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
	}
	return len(q.Choices)
}

func (m *quizModel) move(d int) {
	if n := m.options(); n > 0 {
		m.cursor = (m.cursor + d + n) % n
	}
}

// swap moves the step under the cursor up (-1) or down (+1).
func (m *quizModel) swap(d int) {
	j := m.cursor + d
	if j < 0 || j >= len(m.order) {
		return
	}
	m.order[m.cursor], m.order[j] = m.order[j], m.order[m.cursor]
	m.cursor = j
}

// submit grades the answer on screen (for a live question: first the cause,
// then where to look), saves it, and shows the explanation.
func (m *quizModel) submit() tea.Cmd {
	q := m.q()
	var res quiz.Result
	var err error
	switch q.Kind {
	case quiz.KindSingle:
		res, err = quiz.GradeChoice(q, []int{m.cursor})
	case quiz.KindMultiple:
		var picks []int
		for i := range q.Choices {
			if m.picked[i] {
				picks = append(picks, i)
			}
		}
		if len(picks) == 0 {
			return nil // space picks; enter with nothing picked does nothing
		}
		res, err = quiz.GradeChoice(q, picks)
	case quiz.KindOrder:
		res, err = quiz.GradeOrder(q, m.order)
	case quiz.KindShort:
		res, err = quiz.GradeShort(q, m.ticked)
	case quiz.KindLive:
		if m.live.symptom == nil {
			return nil // the run is not in yet
		}
		if !m.live.causeChosen {
			m.live.cause, m.live.causeChosen, m.cursor = m.cursor, true, 0
			return nil
		}
		m.live.where = m.cursor
		res, err = quiz.GradeLive(q, m.live.cause, m.live.where)
	}
	if err != nil {
		m.live.err = err
		return nil
	}
	m.answered, m.result = true, res
	m.results[m.idx] = &res
	set, id, score := m.set.ID, q.ID, res.Score
	next := m.idx + 1
	cmds := []tea.Cmd{m.c.save(func(p *quiz.Progress) {
		p.Record(set, id, score, now())
		p.Set(set).Next = next
		p.Resume = quiz.Resume{Screen: "quiz", Name: set, Step: next}
	})}
	if q.Kind == quiz.KindLive {
		cmds = append(cmds, m.runLive(true))
	}
	return tea.Batch(cmds...)
}

// next goes to the next question, or to the summary after the last.
func (m *quizModel) next() tea.Cmd {
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
	return m.c.save(func(p *quiz.Progress) {
		p.FinishAttempt(set, score)
		p.Resume = quiz.Resume{}
	})
}

func (m *quizModel) bindings() bindings {
	k := m.c.keys
	var short []key.Binding
	switch {
	case m.done:
		short = []key.Binding{k.Restart, k.Back}
	case m.typing:
		done := key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "done writing"))
		short = []key.Binding{done, k.Back}
	case m.answered:
		next := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next"))
		short = []key.Binding{next, scrollKeys, k.Back, k.Help}
	case m.q().Kind == quiz.KindLive && m.live.symptom == nil:
		short = []key.Binding{k.Back, k.Help}
	default:
		short = []key.Binding{k.Up, k.Down}
		switch m.q().Kind {
		case quiz.KindMultiple, quiz.KindShort:
			short = append(short, k.Toggle)
		case quiz.KindOrder:
			short = append(short, k.MoveUp, k.MoveDown)
		}
		short = append(short, key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer")), k.Back, k.Help)
	}
	return bindings{short: short, full: [][]key.Binding{short, {k.Help, k.Quit}}}
}

// View shows the title line, then the question, scrolled to follow its end
// when it is taller than the window.
func (m *quizModel) View() string {
	if m.done {
		return m.scroll.view(m.summary(), m.c.width, m.c.height-1)
	}
	return m.title() + "\n" + m.scroll.view(m.body(), m.c.width, m.c.height-2)
}

// title names the set, the question's place and its source.
func (m *quizModel) title() string {
	st := m.c.st
	return st.title.Render(m.set.Title) + st.subtle.Render(fit(fmt.Sprintf(" · question %d of %d · %s", m.idx+1, len(m.set.Questions), m.q().Source),
		m.c.width-len(m.set.Title)))
}

// body is the whole question.
func (m *quizModel) body() string {
	st := m.c.st
	w := m.c.width
	wrap := lipgloss.NewStyle().Width(min(w, 100))
	var b strings.Builder
	q := m.q()
	if m.idx == 0 && m.set.Intro != "" && !m.answered {
		b.WriteString(st.subtle.Render(wrap.Render(m.set.Intro)) + "\n")
	}
	b.WriteString("\n" + st.caption.Render(wrap.Render(q.Prompt)) + "\n\n")
	switch q.Kind {
	case quiz.KindSingle, quiz.KindMultiple:
		b.WriteString(m.choicesView(q.Choices, q.Correct, q.Kind == quiz.KindMultiple))
	case quiz.KindOrder:
		b.WriteString(m.orderView(q))
	case quiz.KindShort:
		b.WriteString(m.shortView(q))
	case quiz.KindLive:
		b.WriteString(m.liveView(q))
	}
	if m.answered {
		b.WriteString("\n" + m.verdict() + "\n")
		if q.Explain != "" {
			b.WriteString(wrap.Render(q.Explain) + "\n")
		}
	}
	if m.live.err != nil {
		b.WriteString("\n" + st.bad.Render(wrap.Render(m.live.err.Error())) + "\n")
	}
	return b.String()
}

// choicesView lists choices with the cursor, the picks and, once answered,
// which were right.
func (m *quizModel) choicesView(choices []string, correct []int, multi bool) string {
	st := m.c.st
	var b strings.Builder
	right := map[int]bool{}
	for _, c := range correct {
		right[c] = true
	}
	for i, c := range choices {
		cur := "  "
		if i == m.cursor && !m.answered {
			cur = st.cursor.Render("▸ ")
		}
		box := ""
		if multi {
			box = "[ ] "
			if m.picked[i] {
				box = "[x] "
			}
		}
		mark := ""
		if m.answered {
			switch {
			case right[i]:
				mark = st.good.Render(" ✓")
			case m.picked[i] || (!multi && i == m.cursor):
				mark = st.bad.Render(" ✗")
			}
		}
		b.WriteString(hang(cur+box, c, m.c.width-2) + mark + "\n")
	}
	return b.String()
}

func (m *quizModel) orderView(q quiz.Question) string {
	st := m.c.st
	var b strings.Builder
	for pos, i := range m.order {
		cur := "  "
		if pos == m.cursor && !m.answered {
			cur = st.cursor.Render("▸ ")
		}
		prefix := cur + fmt.Sprintf("%d. ", pos+1)
		if m.answered {
			if m.result.Positions[pos] {
				prefix = cur + st.good.Render("✓ ") + fmt.Sprintf("%d. ", pos+1)
			} else {
				prefix = cur + st.bad.Render("✗ ") + fmt.Sprintf("%d. ", pos+1)
			}
		}
		b.WriteString(hang(prefix, q.Steps[i].String(), m.c.width) + "\n")
	}
	if m.answered {
		b.WriteString("\n" + st.subtle.Render("The right order:") + "\n")
		for pos, s := range q.Steps {
			b.WriteString(hang(fmt.Sprintf("  %d. ", pos+1), s.String(), m.c.width) + "\n")
		}
	}
	return b.String()
}

func (m *quizModel) shortView(q quiz.Question) string {
	st := m.c.st
	if m.typing {
		return m.text.View() + "\n"
	}
	var b strings.Builder
	if v := strings.TrimSpace(m.text.Value()); v != "" {
		b.WriteString(st.subtle.Render("You wrote:") + "\n" + lipgloss.NewStyle().Width(min(m.c.width, 100)).Render(v) + "\n\n")
	}
	b.WriteString(st.subtle.Render("The model answer:") + "\n" + lipgloss.NewStyle().Width(min(m.c.width, 100)).Render(q.Model) + "\n\n")
	b.WriteString(st.subtle.Render("Tick the points your answer made (space), then enter:") + "\n")
	for i, p := range q.Points {
		cur := "  "
		if i == m.cursor && !m.answered {
			cur = st.cursor.Render("▸ ")
		}
		box := "[ ] "
		if m.ticked[i] {
			box = "[x] "
		}
		b.WriteString(hang(cur+box, p, m.c.width-2) + "\n")
	}
	return b.String()
}

func (m *quizModel) liveView(q quiz.Question) string {
	st := m.c.st
	wrap := lipgloss.NewStyle().Width(min(m.c.width, 100))
	var b strings.Builder
	name := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Variant)
	switch {
	case m.live.running:
		b.WriteString(m.spin.View() + st.subtle.Render(" running "+name+" on PostgreSQL…") + "\n")
		return b.String()
	case m.live.symptom == nil && m.live.err == nil:
		b.WriteString(st.subtle.Render("waiting for PostgreSQL…") + "\n")
		return b.String()
	case m.live.symptom == nil:
		b.WriteString(st.warn.Render(wrap.Render("This question runs the design live on PostgreSQL, which is not available here. "+
			"Esc goes back; `learn doctor` says how to get one.")) + "\n")
		return b.String()
	}
	b.WriteString(st.boxTitle.Render("Live run ("+name+"):") + "\n" + symptomLines(*m.live.symptom, m.c.width) + "\n")
	if !m.live.causeChosen {
		b.WriteString(st.subtle.Render("What causes it?") + "\n")
		b.WriteString(m.choicesView(q.Choices, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Cause", q.Choices, q.Correct[0], m.live.cause, m.answered))
	if !m.answered {
		b.WriteString("\n" + st.subtle.Render("Where do you look?") + "\n")
		b.WriteString(m.choicesView(q.Live.Where, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Where", q.Live.Where, q.Live.WhereCorrect, m.live.where, true))
	besideName := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Beside)
	switch {
	case m.live.besideRunning:
		b.WriteString("\n" + m.spin.View() + st.subtle.Render(" running "+besideName+" beside it…") + "\n")
	case m.live.beside != nil:
		b.WriteString("\n" + st.boxTitle.Render("Beside it ("+besideName+"):") + "\n" + symptomLines(*m.live.beside, m.c.width) + "\n")
		if q.Live.BesideNote != "" {
			b.WriteString(wrap.Render(q.Live.BesideNote) + "\n")
		}
	}
	return b.String()
}

// pickLine is the learner's pick, marked right or wrong once answered,
// with the right one after a wrong pick.
func (m *quizModel) pickLine(label string, choices []string, right, picked int, answered bool) string {
	st := m.c.st
	line := hang(st.subtle.Render(label+": "), choices[picked], m.c.width-2)
	switch {
	case !answered:
	case picked == right:
		line += st.good.Render(" ✓")
	default:
		line += st.bad.Render(" ✗") + "\n" + hang(st.subtle.Render(strings.Repeat(" ", len(label)-2)+"it was: "), choices[right], m.c.width-2)
	}
	return line + "\n"
}

// symptomLines shows a run's numbers.
func symptomLines(s quiz.Symptom, w int) string {
	statuses := make([]string, len(s.Statuses))
	for i, st := range s.Statuses {
		statuses[i] = fmt.Sprint(st)
	}
	lines := []string{
		fmt.Sprintf("  answers %s · %d lost · %s, %s, %s", strings.Join(statuses, " "), s.Lost,
			countOf(s.Intents, "intent"), countOf(s.Keys, "key"), countOf(s.Tries, "try")),
		fmt.Sprintf("  %s · %d seats taken", countOf(s.Rows, "booking row"), s.Seats),
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
		lines[i] = fit(l, w)
	}
	return strings.Join(lines, "\n")
}

// verdict says how the answer scored.
func (m *quizModel) verdict() string {
	st := m.c.st
	r := m.result
	switch {
	case r.Correct:
		return st.good.Render("Right.")
	case r.Score > 0:
		out := st.warn.Render(fmt.Sprintf("Partly right: %.0f%%.", r.Score*100))
		if len(r.Missed) > 0 {
			out += st.subtle.Render(" Missed: " + strings.Join(r.Missed, "; "))
		}
		return lipgloss.NewStyle().Width(min(m.c.width, 100)).Render(out)
	}
	return st.bad.Render("Not this time.")
}

// summary is the end of an attempt: each question's score and the total.
func (m *quizModel) summary() string {
	st := m.c.st
	var b strings.Builder
	var rs []quiz.Result
	b.WriteString(st.title.Render(m.set.Title+": done") + "\n\n")
	for i, q := range m.set.Questions {
		r := m.results[i]
		mark, score := st.faint.Render("·"), "skipped"
		if r != nil {
			rs = append(rs, *r)
			score = fmt.Sprintf("%3.0f%%", r.Score*100)
			switch {
			case r.Correct:
				mark = st.good.Render("✓")
			case r.Score > 0:
				mark = st.warn.Render("◐")
			default:
				mark = st.bad.Render("✗")
			}
		}
		b.WriteString(fmt.Sprintf("%s %s  %s\n", mark, score, fit(q.Prompt, m.c.width-10)))
	}
	sp := m.c.prog.Set(m.set.ID)
	b.WriteString(fmt.Sprintf("\nScore %.0f%% · best %.0f%% over %s\n", quiz.Score(rs)*100, sp.Best*100, countOf(sp.Attempts, "attempt")))
	b.WriteString(st.subtle.Render("r tries again, enter or esc goes home") + "\n")
	return b.String()
}

// setByID returns the set with id.
func setByID(id string) (quiz.Set, bool) {
	for _, s := range quiz.Sets() {
		if s.ID == id {
			return s, true
		}
	}
	return quiz.Set{}, false
}

// textBox is the text box of a short answer or a spoken one.
type textBox = textarea.Model

// newTextBox is a text box of h lines for a window w cells wide.
func newTextBox(placeholder string, w, h int) textBox {
	t := textarea.New()
	t.Placeholder = placeholder
	t.ShowLineNumbers = false
	t.SetWidth(textWidth(w))
	t.SetHeight(h)
	return t
}

// textWidth is the width of a text box in a window w cells wide.
func textWidth(w int) int { return max(20, min(w-4, 90)) }

// hang writes text after prefix, wrapped to w cells, its further lines
// indented under the text: a choice is never cut short.
func hang(prefix, text string, w int) string {
	pw := ansi.StringWidth(prefix)
	lines := strings.Split(lipgloss.NewStyle().Width(max(10, w-pw)).Render(text), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", pw) + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// typeInto gives a key to a text box: tab ends the writing (done), esc goes
// back, any other key edits the text.
func typeInto(t *textBox, msg tea.KeyPressMsg) (done bool, cmd tea.Cmd) {
	switch msg.String() {
	case "tab":
		t.Blur()
		return true, nil
	case "esc":
		return false, back
	}
	*t, cmd = t.Update(msg)
	return false, cmd
}
