// Package home is the home menu: read, watch, practise, each entry with
// the learner's progress beside it, and where the database stands.
package home

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/dbstatus"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// item is one entry of the menu; status, when set, says the learner's
// progress on it.
type item struct {
	title, desc string
	open        common.Open
	status      func(p *quiz.Progress) string
	gapAfter    bool // a blank line follows: read | watch | practise
}

// Model is the home menu.
type Model struct {
	c      *common.Common
	items  []item
	cursor int
	spin   spinner.Model
}

// New builds the menu from the pages, the scenarios and the quiz sets.
func New(c *common.Common) *Model {
	var items []item
	for _, p := range lessons.All() {
		kind, slug := "Lesson", p.Slug
		if p.Kind == lessons.KindInterview {
			kind = "Interview card"
		}
		items = append(items, item{title: kind + ": " + p.Title, desc: blurb(p), open: common.Open{Page: common.PageReader, Name: p.Slug},
			status: func(pr *quiz.Progress) string {
				if pr.IsRead(slug) {
					return "✓ read"
				}
				return "not read yet"
			}})
	}
	items[len(items)-1].gapAfter = true
	lost, _ := sim.Lookup("lost-answer")
	items = append(items,
		item{title: "Play: the lost answer", desc: lost.Summary, open: common.Open{Page: common.PagePlay, Name: lost.Name}},
		item{title: "Race: N copies of one request at once", desc: "fire 2 to 100 copies at the same instant and watch one booking come out (v: without the lock)",
			open: common.Open{Page: common.PageRace}},
		item{title: fmt.Sprintf("Scenarios: all %d, %d with a broken design", len(sim.Scenarios()), brokenCount()),
			desc: "every failure the lesson names, run live: pick one, v for its broken variant", open: common.Open{Page: common.PagePicker}, gapAfter: true})
	for _, s := range quiz.Sets() {
		id := s.ID
		items = append(items, item{title: fmt.Sprintf("%s (%s)", s.Title, setSize(s)), desc: s.Intro, open: common.Open{Page: common.PageQuiz, Name: s.ID},
			status: func(pr *quiz.Progress) string { return setStatus(pr, id) }})
	}
	d := quiz.Interview()
	items = append(items, item{title: "Interview drill", open: common.Open{Page: common.PageDrill},
		desc: fmt.Sprintf("%d answers against a countdown, then %d flashcards by spaced repetition", len(d.Prompts), len(d.Cards)),
		status: func(pr *quiz.Progress) string {
			return fmt.Sprintf("%d due today", quiz.DueToday(pr, d.Cards, common.Now()))
		}})
	return &Model{c: c, items: items, spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

// setSize is "5 questions", "6 live scenarios", "1 question".
func setSize(s quiz.Set) string {
	live := 0
	for _, q := range s.Questions {
		if q.Kind == quiz.KindLive {
			live++
		}
	}
	if live == len(s.Questions) {
		return common.Count(live, "live scenario")
	}
	return common.Count(len(s.Questions), "question")
}

// setStatus is the learner's record of a set, in a few words.
func setStatus(p *quiz.Progress, id string) string {
	sp, ok := p.Sets[id]
	if !ok || (sp.Attempts == 0 && len(sp.Answers) == 0) {
		return "not taken yet"
	}
	if sp.Attempts == 0 {
		return fmt.Sprintf("%d answered, unfinished", len(sp.Answers))
	}
	return fmt.Sprintf("best %.0f%% · last %.0f%% · %s", sp.Best*100, sp.LastScore*100, common.Count(sp.Attempts, "attempt"))
}

func blurb(p *lessons.Page) string {
	if p.Kind == lessons.KindInterview {
		return "the 30-second answer, the deeper answer and the counter-questions"
	}
	return "why a retried booking must not book twice, and how a key in the row prevents it"
}

// brokenCount is how many scenarios have a broken variant.
func brokenCount() int {
	n := 0
	for _, s := range sim.Scenarios() {
		if s.HasBroken() {
			n++
		}
	}
	return n
}

// Init starts the spinner of the database line.
func (m *Model) Init() tea.Cmd { return m.spin.Tick }

// Title names the page.
func (m *Model) Title() string { return "learn" }

// Update moves the cursor, opens the entry under it, and spins while the
// database starts.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := m.c.Keys
		switch {
		case key.Matches(msg, k.Up):
			m.cursor = (m.cursor + len(m.items) - 1) % len(m.items)
		case key.Matches(msg, k.Down):
			m.cursor = (m.cursor + 1) % len(m.items)
		case key.Matches(msg, k.Open):
			return common.OpenCmd(m.items[m.cursor].open)
		}
	case spinner.TickMsg:
		if ready, _, err := m.c.DB.Status(); ready || err != nil {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	}
	return nil
}

// KeyMap is the menu's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	return common.Bindings{
		Short: []key.Binding{k.Up, k.Down, k.Open, k.Help, k.Quit},
		Full:  [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Help, k.Quit}},
	}
}

// View draws the menu, the entry's description, the notices and the
// database line.
func (m *Model) View() string {
	st := m.c.Styles
	w := m.c.Width
	var b strings.Builder
	b.WriteString(st.Title.Render("learn") + st.Subtle.Render(" · idempotency keys for booking retries") + "\n\n")
	for i, it := range m.items {
		status := ""
		if it.status != nil {
			status = it.status(m.c.Progress.Get())
		}
		title := common.Truncate(it.title, w-4-ansi.StringWidth(status)-2)
		line := "  " + title
		if i == m.cursor {
			line = st.Cursor.Render("▸ ") + st.Selected.Render(title)
		}
		if status != "" {
			line += strings.Repeat(" ", max(2, w-2-ansi.StringWidth(line)-ansi.StringWidth(status))) + st.Subtle.Render(status)
		}
		b.WriteString(line + "\n")
		if it.gapAfter {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n" + st.Subtle.Render(common.Truncate(m.items[m.cursor].desc, w)) + "\n\n")
	for _, n := range m.c.Progress.Notices() {
		b.WriteString(st.Warn.Render(common.Hang("! ", n, w)) + "\n")
	}
	b.WriteString(m.dbLine())
	return b.String()
}

// dbLine tells where the database stands.
func (m *Model) dbLine() string {
	st := m.c.Styles
	ready, took, err := m.c.DB.Status()
	switch {
	case err != nil:
		return st.Warn.Render(common.Truncate("PostgreSQL unavailable: reading works; open a Play item to see why", m.c.Width))
	case ready:
		return st.Good.Render("● ") + st.Subtle.Render(common.Truncate(fmt.Sprintf("PostgreSQL ready in %.1fs: %s", took.Seconds(), m.c.DB.Describe()), m.c.Width-2))
	}
	return m.spin.View() + dbstatus.Line(st, m.c.DB, " PostgreSQL: ", m.c.Width-2)
}
