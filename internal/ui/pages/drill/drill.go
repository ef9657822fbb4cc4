// Package drill is the timed interview drill: each spoken prompt against a
// visible countdown, then the learner's text beside the model answer and
// its key points to tick (a typed answer's ticks checked against the text,
// a spoken one's taken as they are);
// then the follow-ups and counter-questions due today, as flashcards rated
// again / hard / good / easy (spaced repetition, package quiz).
package drill

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/checklist"
	"github.com/learn-idempotency/learn/internal/ui/components/scroller"
	"github.com/learn-idempotency/learn/internal/ui/components/textbox"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// drillPhase is where the drill stands.
type drillPhase int

const (
	drillIntro   drillPhase = iota // the countdown can be set
	drillPrompts                   // the spoken answers, against the countdown
	drillCards                     // the flashcards due
	drillDone
)

// Model is the timed interview drill: each spoken prompt against a
// visible countdown (type or just speak), then the model answer and its key
// points to tick; then the follow-ups and counter-questions due today, as
// flashcards rated again / hard / good / easy.
type Model struct {
	c     *common.Common
	drill quiz.Drill
	phase drillPhase

	// Spoken prompts. While the points are ticked the body is held at its
	// top, scrolled only to keep the point under the cursor in view (lines
	// keepFrom to keepTo) on the next view after it moved (keep).
	scroll           scroller.Model
	keep             bool
	keepFrom, keepTo int
	pi               int
	text             textbox.Model
	textReady        bool // text was made (the zero textarea must not be used)
	remaining        time.Duration
	revealed         bool
	ticked           []bool
	cursor           int
	graded           *quiz.Result
	tick             int // token of the running countdown

	// Flashcards.
	due      []quiz.Card
	ci       int
	showBack bool
	rated    map[quiz.Rating]int
}

// countdownMsg is one second of the countdown.
type countdownMsg struct{ token int }

// New is the drill at its start, where the countdown can be set. step is
// where a resumed drill goes on (Reopen): the index of the question to
// answer next, which enter starts once the countdown is set, or the number
// of questions for the flashcards. At 0, a run left unfinished (a question
// graded, the next not yet: the interview set's Next) goes on where it
// stopped, however the drill is opened, as a quiz does.
func New(c *common.Common, step int) *Model {
	m := &Model{c: c, drill: quiz.Interview(), rated: map[quiz.Rating]int{}, scroll: scroller.New()}
	if sp, ok := c.Progress.Get().Sets[quiz.SetInterview]; ok && step == 0 && sp.Next < len(m.drill.Prompts) {
		step = sp.Next
	}
	switch {
	case step >= len(m.drill.Prompts):
		m.startCards()
	case step > 0:
		m.pi = step
	}
	return m
}

// Init waits for the learner.
func (m *Model) Init() tea.Cmd { return nil }

// Title names the page.
func (m *Model) Title() string { return "Interview drill" }

// Stand is the prompt on screen (or the flashcards, past the last one;
// the drill once done is none to open again), and where the next start
// goes on: the prompt on screen until it is graded (its score is saved:
// asking it again would take a step back), then the next one, then the
// flashcards; nothing once the drill is done.
func (m *Model) Stand() common.Stand {
	on, next := m.pi, m.pi
	switch {
	case m.phase == drillCards || m.phase == drillDone:
		on, next = len(m.drill.Prompts), len(m.drill.Prompts)
	case m.graded != nil:
		next++
	}
	s := common.Stand{At: progress.Place{Page: progress.PageDrill, Step: on}, Reopens: m.phase != drillDone}
	if m.phase != drillDone {
		s.Next = progress.Place{Page: progress.PageDrill, Step: next}
	}
	return s
}

func (m *Model) seconds() int { return quiz.Seconds(m.c.Progress.Get()) }

// startPrompt shows prompt pi with a fresh text box and starts the clock.
func (m *Model) startPrompt() tea.Cmd {
	m.phase, m.revealed, m.graded, m.cursor = drillPrompts, false, nil, 0
	m.scroll.Reset()
	m.ticked = make([]bool, len(m.drill.Prompts[m.pi].Points))
	m.text, m.textReady = textbox.New(m.c.Styles, "type your answer, or say it aloud (tab when done)", m.c.Width, 5), true
	m.remaining = time.Duration(m.seconds()) * time.Second
	m.tick++
	return tea.Batch(m.text.Focus(), m.second())
}

func (m *Model) second() tea.Cmd {
	token := m.tick
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return countdownMsg{token: token} })
}

// startCards takes the cards due now.
func (m *Model) startCards() {
	m.phase, m.ci, m.showBack = drillCards, 0, false
	m.due = quiz.Due(m.c.Progress.Get(), m.drill.Cards, common.Now())
	if len(m.due) == 0 {
		m.phase = drillDone
	}
}

// Capturing reports whether the text box takes every key.
func (m *Model) Capturing() bool { return m.phase == drillPrompts && !m.revealed }

// Update runs the countdown and takes the keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case countdownMsg:
		if msg.token != m.tick || m.phase != drillPrompts || m.revealed {
			return nil
		}
		m.remaining -= time.Second
		if m.remaining <= 0 {
			m.reveal()
			return nil
		}
		return m.second()
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

func (m *Model) reveal() {
	m.revealed, m.remaining = true, max(m.remaining, 0)
	m.text.Blur()
	m.scroll.Top() // the text and the model answer, above the points to tick
	m.keep = true
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	if !m.Capturing() && m.scroll.Key(msg) {
		return nil
	}
	switch m.phase {
	case drillIntro:
		switch {
		case key.Matches(msg, k.Faster):
			s := quiz.ClampSeconds(m.seconds() + 5)
			return m.c.Progress.Save(func(p *progress.Progress) { p.DrillSeconds = s })
		case key.Matches(msg, k.Slower):
			s := quiz.ClampSeconds(m.seconds() - 5)
			return m.c.Progress.Save(func(p *progress.Progress) { p.DrillSeconds = s })
		case key.Matches(msg, k.Open):
			return m.startPrompt()
		case msg.String() == "c":
			m.startCards()
		case key.Matches(msg, k.Back):
			return common.BackCmd
		}
	case drillPrompts:
		if !m.revealed {
			done, cmd := textbox.Type(&m.text, msg)
			if done {
				m.reveal()
			}
			return cmd
		}
		switch {
		case key.Matches(msg, k.Back):
			return common.BackCmd
		case m.graded != nil && key.Matches(msg, k.Open):
			if m.pi+1 < len(m.drill.Prompts) {
				m.pi++
				return m.startPrompt()
			}
			m.startCards()
		case m.graded != nil:
		case key.Matches(msg, k.Up):
			m.cursor, m.keep = max(0, m.cursor-1), true
		case key.Matches(msg, k.Down):
			m.cursor, m.keep = min(len(m.ticked)-1, m.cursor+1), true
		case key.Matches(msg, k.Toggle):
			m.ticked[m.cursor] = !m.ticked[m.cursor]
		case key.Matches(msg, k.Open):
			p := m.drill.Prompts[m.pi]
			r, err := quiz.GradeSpoken(p, m.text.Value(), m.ticked)
			if err != nil {
				return nil
			}
			m.graded = &r
			m.scroll.Reset() // the grade, at the end
			id := p.ID
			// Next is where an unfinished run goes on; the last question
			// graded ends the run (the flashcards are the drill's own).
			next := m.pi + 1
			if next >= len(m.drill.Prompts) {
				next = 0
			}
			return m.c.Progress.Save(func(pr *progress.Progress) {
				pr.Record(quiz.SetInterview, id, r.Score, common.Now())
				pr.Set(quiz.SetInterview).Next = next
			})
		}
	case drillCards:
		if key.Matches(msg, k.Back) {
			return common.BackCmd
		}
		if !m.showBack {
			if key.Matches(msg, k.Open, k.Toggle) {
				m.showBack = true
			}
			return nil
		}
		g, ok := map[string]quiz.Rating{"1": quiz.Again, "2": quiz.Hard, "3": quiz.Good, "4": quiz.Easy,
			"a": quiz.Again, "h": quiz.Hard, "g": quiz.Good, "e": quiz.Easy}[msg.String()]
		if !ok {
			return nil
		}
		id, at := m.due[m.ci].ID, common.Now()
		m.rated[g]++
		cmd := m.c.Progress.Save(func(p *progress.Progress) { quiz.Rate(p, id, g, at) })
		m.ci, m.showBack = m.ci+1, false
		if m.ci >= len(m.due) {
			m.phase = drillDone
		}
		return cmd
	case drillDone:
		if key.Matches(msg, k.Back, k.Open) {
			return common.BackCmd
		}
	}
	return nil
}

// KeyMap is the keys of the drill's phase.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	enter := func(what string) key.Binding {
		return key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", what))
	}
	var short []key.Binding
	switch {
	case m.phase == drillIntro:
		// Most important first: the footer drops from the end.
		short = []key.Binding{enter("start"),
			key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+/-", "countdown ±5 s")),
			key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cards only")), k.Back}
	case m.phase == drillPrompts && !m.revealed:
		short = []key.Binding{key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "done")), k.Back}
	case m.phase == drillPrompts && m.graded == nil:
		// Ticking and grading are what this screen is for; moving comes after.
		short = []key.Binding{k.Toggle, enter("grade"), k.Up, k.Down, k.Back}
	case m.phase == drillPrompts:
		short = []key.Binding{enter("next"), k.Back}
	case m.phase == drillCards && !m.showBack:
		short = []key.Binding{enter("show the answer"), k.Back}
	case m.phase == drillCards:
		short = []key.Binding{key.NewBinding(key.WithKeys("1", "2", "3", "4"), key.WithHelp("1-4", "again/hard/good/easy")), k.Back}
	default:
		short = []key.Binding{k.Back}
	}
	return common.Bindings{Short: short, Full: [][]key.Binding{short, {k.Help, k.Quit}}}
}

// View is the drill, scrolled to its end (the countdown is on the title
// line, which stays).
// View draws the phase on screen.
func (m *Model) View() string {
	body := m.body()
	if m.keep {
		m.keep = false
		return m.c.Styles.Title.Render("Interview drill") + "\n" + m.scroll.ViewAt(body, m.c.Width, m.c.Body()-1, m.keepFrom, m.keepTo)
	}
	return m.c.Styles.Title.Render("Interview drill") + "\n" + m.scroll.View(body, m.c.Width, m.c.Body()-1)
}

func (m *Model) body() string {
	st := m.c.Styles
	wrap := lipgloss.NewStyle().Width(min(m.c.Width, 100))
	var b strings.Builder
	b.WriteString("\n")
	switch m.phase {
	case drillIntro:
		dueNow := len(quiz.Due(m.c.Progress.Get(), m.drill.Cards, common.Now()))
		later := quiz.DueToday(m.c.Progress.Get(), m.drill.Cards, common.Now()) - dueNow
		cards := common.Count(dueNow, "card") + " due now"
		if later > 0 {
			cards += fmt.Sprintf(", %d more later today", later)
		}
		each := "each against a countdown"
		if len(m.drill.Prompts)-m.pi == 1 {
			each = "against a countdown"
		}
		b.WriteString(wrap.Render(fmt.Sprintf("%s to answer aloud or in writing, %s of %d seconds "+
			"(a good spoken answer takes 20 to 30), then the model answer and its key points to tick. "+
			"After them, the follow-ups and counter-questions as flashcards: %s.",
			common.Count(len(m.drill.Prompts)-m.pi, "question"), each, m.seconds(), cards)) + "\n\n")
		if m.pi > 0 {
			b.WriteString(st.Current.Render(fmt.Sprintf("Going on at question %d of %d: the one before is graded.", m.pi+1, len(m.drill.Prompts))) + "\n\n")
		}
		b.WriteString(st.Subtle.Render(fmt.Sprintf("Countdown: %d s (+/- to change, 10 to 120)", m.seconds())) + "\n")
	case drillPrompts:
		p := m.drill.Prompts[m.pi]
		clock := fmt.Sprintf("%d:%02d", int(m.remaining.Minutes()), int(m.remaining.Seconds())%60)
		style := st.Current
		if m.remaining <= 5*time.Second {
			style = st.Bad
		}
		// The clock first, so it always shows; the place wraps after it.
		mark := "⏱ " + clock + "  "
		place := common.Hang(strings.Repeat(" ", lipgloss.Width(mark)), fmt.Sprintf("Question %d of %d · %s", m.pi+1, len(m.drill.Prompts), p.Source), m.c.Width)
		b.WriteString(style.Render(strings.TrimSpace(mark)) + "  " + st.Subtle.Render(strings.TrimLeft(place, " ")) + "\n\n")
		b.WriteString(st.Caption.Render(wrap.Render(p.Question)) + "\n\n")
		if !m.revealed {
			b.WriteString(m.text.View() + "\n")
			if full := textbox.Full(m.c.Styles, m.text); full != "" {
				b.WriteString(full + "\n")
			}
			break
		}
		cursor := m.cursor
		if m.graded != nil {
			cursor = -1
		}
		view, from, to := checklist.Checklist{Typed: m.text.Value(), Spoken: true, Model: p.Model, Points: p.Points, Cues: p.Cues,
			Ticked: m.ticked, Cursor: cursor}.View(st, m.c.Width)
		above := lipgloss.Height(b.String()) - 1
		m.keepFrom, m.keepTo = above+from, above+to
		b.WriteString(view)
		if m.graded != nil {
			b.WriteString("\n" + st.Good.Render(fmt.Sprintf("%.0f%% of the key points.", m.graded.Score*100)) + "\n")
			if len(m.graded.Unsaid) > 0 {
				b.WriteString(st.Subtle.Render(common.Hang("", common.Count(len(m.graded.Unsaid), "point")+" ticked but not in your text, so counted "+checklist.Half()+".", m.c.Width)) + "\n")
			}
		}
	case drillCards:
		c := m.due[m.ci]
		b.WriteString(st.Subtle.Render(common.Hang("", fmt.Sprintf("Card %d of %d due · %s", m.ci+1, len(m.due), c.Source), m.c.Width)) + "\n\n")
		b.WriteString(st.Caption.Render(wrap.Render(plainMarkdown(c.Front))) + "\n\n")
		if m.showBack {
			b.WriteString(wrap.Render(plainMarkdown(c.Back)) + "\n\n")
			b.WriteString(st.Subtle.Render("How well did you recall it? 1 again · 2 hard · 3 good · 4 easy") + "\n")
		} else {
			b.WriteString(st.Subtle.Render("Answer it in your head, then enter shows the answer.") + "\n")
		}
	case drillDone:
		b.WriteString("Done for now.\n")
		if n := len(m.due); n > 0 {
			b.WriteString(fmt.Sprintf("%s reviewed: %d again, %d hard, %d good, %d easy.\n", common.Count(n, "card"),
				m.rated[quiz.Again], m.rated[quiz.Hard], m.rated[quiz.Good], m.rated[quiz.Easy]))
		}
		if next, ok := nextDue(m.c.Progress.Get(), m.drill.Cards); ok {
			b.WriteString(st.Subtle.Render("Next card due "+next.Local().Format("Mon 2 Jan 15:04")) + "\n")
		}
	}
	return b.String()
}

// nextDue is when the next card falls due.
func nextDue(p *progress.Progress, cards []quiz.Card) (time.Time, bool) {
	var first time.Time
	for _, c := range cards {
		r, ok := p.Drill[c.ID]
		if !ok {
			return common.Now(), true
		}
		if first.IsZero() || r.Due.Before(first) {
			first = r.Due
		}
	}
	return first, !first.IsZero()
}

// plainMarkdown drops the Markdown markers a card's text may carry.
func plainMarkdown(s string) string {
	return strings.NewReplacer("**", "", "`", "", "### ", "").Replace(s)
}
