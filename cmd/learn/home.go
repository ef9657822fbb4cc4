package main

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/sim"
)

// homeItem is one entry of the home menu.
type homeItem struct {
	title, desc string
	screen      screenID
	name        string
}

// homeModel is the home menu: the pages to read and the sequences to play.
type homeModel struct {
	c      *common
	items  []homeItem
	cursor int
	spin   spinner.Model
}

func newHome(c *common) *homeModel {
	var items []homeItem
	for _, p := range lessons.All() {
		kind := "Lesson"
		if p.Kind == lessons.KindInterview {
			kind = "Interview card"
		}
		items = append(items, homeItem{title: kind + ": " + p.Title, desc: pageBlurb(p), screen: screenReader, name: p.Slug})
	}
	lost, _ := sim.Lookup("lost-answer")
	items = append(items,
		homeItem{title: "Play: the lost answer", desc: lost.Summary, screen: screenPlay, name: lost.Name},
		homeItem{title: "Race: N copies of one request at once", desc: "fire 2 to 100 copies at the same instant and watch one booking come out (v: without the lock)",
			screen: screenRace},
		homeItem{title: fmt.Sprintf("Scenarios: all %d, correct and broken", len(sim.Scenarios())),
			desc: "every failure the lesson names, run live: pick one, v for its broken variant", screen: screenPicker})
	return &homeModel{c: c, items: items, spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
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
		full:  [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Help, k.Quit}},
	}
}

func (m *homeModel) View() string {
	st := m.c.st
	var b strings.Builder
	b.WriteString(st.title.Render("learn") + st.subtle.Render(" · idempotency keys for booking retries") + "\n\n")
	for i, it := range m.items {
		title := fit(it.title, m.c.width-4)
		desc := fit(it.desc, m.c.width-4)
		if i == m.cursor {
			b.WriteString(st.cursor.Render("▸ ") + st.selected.Render(title) + "\n")
			b.WriteString("  " + st.subtle.Render(desc) + "\n\n")
		} else {
			b.WriteString(st.item.Render(title) + "\n")
			b.WriteString("  " + st.faint.Render(desc) + "\n\n")
		}
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
