package main

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// homeItem is one entry of the home menu; status, when set, says the
// learner's progress on it.
type homeItem struct {
	title, desc string
	screen      screenID
	name        string
	status      func(p *quiz.Progress) string
}

// homeModel is the home menu: read, watch, practise, each with the
// learner's progress beside it.
type homeModel struct {
	c      *common
	items  []homeItem
	cursor int
	spin   spinner.Model
}

func newHome(c *common) *homeModel {
	var items []homeItem
	for _, p := range lessons.All() {
		kind, slug := "Lesson", p.Slug
		if p.Kind == lessons.KindInterview {
			kind = "Interview card"
		}
		items = append(items, homeItem{title: kind + ": " + p.Title, desc: pageBlurb(p), screen: screenReader, name: p.Slug,
			status: func(pr *quiz.Progress) string {
				if pr.IsRead(slug) {
					return "✓ read"
				}
				return "not read yet"
			}})
	}
	lost, _ := sim.Lookup("lost-answer")
	items = append(items,
		homeItem{title: "Play: the lost answer", desc: lost.Summary, screen: screenPlay, name: lost.Name},
		homeItem{title: "Race: N copies of one request at once", desc: "fire 2 to 100 copies at the same instant and watch one booking come out (v: without the lock)",
			screen: screenRace},
		homeItem{title: fmt.Sprintf("Scenarios: all %d, %d with a broken design", len(sim.Scenarios()), brokenCount()),
			desc: "every failure the lesson names, run live: pick one, v for its broken variant", screen: screenPicker})
	for _, s := range quiz.Sets() {
		id := s.ID
		items = append(items, homeItem{title: fmt.Sprintf("%s (%s)", s.Title, setSize(s)), desc: s.Intro, screen: screenQuiz, name: s.ID,
			status: func(pr *quiz.Progress) string { return setStatus(pr, id) }})
	}
	d := quiz.Interview()
	items = append(items, homeItem{title: "Interview drill", screen: screenDrill,
		desc: fmt.Sprintf("%d answers against a countdown, then %d flashcards by spaced repetition", len(d.Prompts), len(d.Cards)),
		status: func(pr *quiz.Progress) string {
			return fmt.Sprintf("%d due today", quiz.DueToday(pr, d.Cards, now()))
		}})
	return &homeModel{c: c, items: items, spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
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
		return countOf(live, "live scenario")
	}
	return countOf(len(s.Questions), "question")
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
	return fmt.Sprintf("best %.0f%% · last %.0f%% · %s", sp.Best*100, sp.LastScore*100, countOf(sp.Attempts, "attempt"))
}

func pageBlurb(p *lessons.Page) string {
	if p.Kind == lessons.KindInterview {
		return "the 30-second answer, the deeper answer and the counter-questions"
	}
	return "why a retried booking must not book twice, and how a key in the row prevents it"
}

func (m *homeModel) Init() tea.Cmd { return m.spin.Tick }

func (m *homeModel) Update(msg tea.Msg) (*homeModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := m.c.keys
		switch {
		case key.Matches(msg, k.Up):
			m.cursor = (m.cursor + len(m.items) - 1) % len(m.items)
		case key.Matches(msg, k.Down):
			m.cursor = (m.cursor + 1) % len(m.items)
		case key.Matches(msg, k.Open):
			it := m.items[m.cursor]
			return m, open(it.screen, it.name)
		}
	case spinner.TickMsg:
		if m.c.dbReady {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m *homeModel) bindings() bindings {
	k := m.c.keys
	return bindings{
		short: []key.Binding{k.Up, k.Down, k.Open, k.Help, k.Quit},
		full:  [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Present, k.Help, k.Quit}},
	}
}

func (m *homeModel) View() string {
	st := m.c.st
	w := m.c.width
	var b strings.Builder
	b.WriteString(st.title.Render("learn") + st.subtle.Render(" · idempotency keys for booking retries") + "\n\n")
	for i, it := range m.items {
		status := ""
		if it.status != nil {
			status = it.status(m.c.prog)
		}
		title := fit(it.title, w-4-ansi.StringWidth(status)-2)
		var line string
		if i == m.cursor {
			line = st.cursor.Render("▸ ") + st.selected.Render(title)
		} else {
			line = "  " + title
		}
		if status != "" {
			line += strings.Repeat(" ", max(2, w-2-ansi.StringWidth(line)-ansi.StringWidth(status))) + st.subtle.Render(status)
		}
		b.WriteString(line + "\n")
		if i == 1 || i == 4 { // read | watch | practise
			b.WriteString("\n")
		}
	}
	b.WriteString("\n" + st.subtle.Render(fit(m.items[m.cursor].desc, w)) + "\n\n")
	for _, n := range m.c.notices {
		b.WriteString(st.warn.Render(hang("! ", n, w)) + "\n")
	}
	b.WriteString(m.dbLine())
	return b.String()
}

// dbLine tells where the database stands.
func (m *homeModel) dbLine() string {
	st := m.c.st
	switch {
	case m.c.dbErr != nil:
		return st.warn.Render(fit("PostgreSQL unavailable: reading works; open a Play item to see why", m.c.width))
	case m.c.dbReady:
		return st.good.Render("● ") + st.subtle.Render(fit(fmt.Sprintf("PostgreSQL ready in %.1fs: %s", m.c.dbTook.Seconds(), m.c.srv.Describe()), m.c.width-2))
	}
	progress := m.c.db.status()
	return m.spin.View() + st.subtle.Render(fit(" PostgreSQL: "+ellipsis(progress), m.c.width-2))
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
