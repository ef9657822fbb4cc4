package lab

// This file draws the lab: the switches, the scorecard, the challenges
// and the detail of what is under the cursor.

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// View draws the switches and the scorecard side by side, the challenge
// above them, and below them the full text of what is under the cursor.
func (m *Model) View() string {
	st := m.c.Styles
	w := m.c.Width
	status := "not run yet"
	switch {
	case m.running:
		status = m.spin.View() + fmt.Sprintf(" running %d of %d scenarios…", len(sim.Scenarios())-len(m.results), len(sim.Scenarios()))
	case m.card != nil:
		status = m.card.Summary
	}
	parts := []string{common.Header(st, "Design lab", " · "+status, "", w)}
	if c := m.challenge; c != nil {
		mark, why := st.Accent.Render("Challenge: "), ""
		switch {
		case m.met:
			mark = st.Good.Render("✓ Challenge passed: ")
		case m.card != nil && !m.running && m.why != "":
			why = "\n" + st.Warn.Render(common.Hang("  not yet: ", m.why, w))
		}
		parts = append(parts, common.Hang(mark, c.Title+" · "+c.Prompt, w)+why)
	}
	leftW := max(34, min(44, w/2))
	detail := m.detail(w)
	// The columns take what the header, the challenge and the detail
	// leave, at least the switches' height; the scorecard scrolls in it.
	// When the window is too narrow for two columns, the part in focus
	// takes the whole width (tab goes to the other).
	fixed := len(strings.Split(strings.Join(parts, "\n"), "\n")) + 2
	var left, right string
	var room int
	if m.narrow() {
		left = m.switchesView(w)
		room = max(lipgloss.Height(left), m.c.Body()-fixed-lipgloss.Height(detail))
		switch m.focus {
		case onScorecard:
			left = m.scorecardView(w, room)
		case onChallenges:
			left = m.challengesView(w)
		}
	} else {
		left = m.switchesView(leftW)
		room = max(lipgloss.Height(left), m.c.Body()-fixed-lipgloss.Height(detail))
		right = " " + m.scorecardView(w-leftW-1, room)
		if m.focus == onChallenges {
			right = " " + m.challengesView(w-leftW-1)
		}
	}
	if dl := strings.Split(detail, "\n"); fixed+room+len(dl) > m.c.Body() { // a small window: the detail's start
		dl = dl[:max(0, m.c.Body()-fixed-room)]
		detail = strings.Join(dl, "\n")
	}
	parts = append(parts, "", lipgloss.JoinHorizontal(lipgloss.Top, left, right), "", detail)
	return strings.Join(parts, "\n")
}

// narrow reports whether the window is too narrow for the switches and the
// scorecard side by side (a ✗ row's consequence needs about 36 cells).
func (m *Model) narrow() bool { return m.c.Width-max(34, min(44, m.c.Width/2))-1 < 36 }

// switchesView lists the switches with their values.
func (m *Model) switchesView(w int) string {
	st := m.c.Styles
	lines := []string{st.BoxTitle.Render("Switches") + st.Faint.Render("  (the lesson's in grey)")}
	inert := notApplying(m.design)
	for i, sw := range m.switches {
		v := m.design.Get(sw.Name)
		value := v
		switch _, na := inert[sw.Name]; {
		case na:
			value = st.Faint.Render(v + " (n/a)")
		case v != sw.Values[0]:
			value = st.Warn.Render(v)
		default:
			value = st.Faint.Render(v)
		}
		line := fmt.Sprintf("%-11s %s", sw.Name, value)
		if i == m.cursor && m.focus == onSwitches {
			line = st.Cursor.Render("▸ ") + fmt.Sprintf("%-11s ", sw.Name) + "◂ " + value + " ▸"
		} else {
			line = "  " + line
		}
		lines = append(lines, ansi.Truncate(line, w, "…"))
	}
	stale := m.card != nil && m.ran != m.design && !m.running
	if stale {
		lines = append(lines, "", st.Warn.Render(common.Hang("", "the design changed: enter runs it", w)))
	}
	return lipgloss.NewStyle().Width(w).Render(strings.Join(lines, "\n"))
}

// scorecardView lists every scenario with its mark, and under each ✗ what
// the user suffers, in w x h cells: the header (the design, wrapped) stays,
// the rows scroll to keep the one under the cursor on screen, and a line
// says how many are above or below.
func (m *Model) scorecardView(w, h int) string {
	st := m.c.Styles
	head := append([]string{st.BoxTitle.Render("Scorecard")}, strings.Split(st.Faint.Render(common.HangWords("  ", "("+m.ran.String()+")", w)), "\n")...)
	var rows [][]string
	for i, s := range sim.Scenarios() {
		mark := st.Faint.Render("·")
		if m.running {
			mark = m.spin.View()
		}
		r, ok := m.results[s.Name]
		if ok {
			switch {
			case r.Error != "":
				mark = st.Warn.Render("?")
			case r.Pass:
				mark = st.Good.Render("✓")
			default:
				mark = st.Bad.Render("✗")
			}
		}
		line := mark + " " + s.Name
		if i == m.row && m.focus == onScorecard {
			line = st.Cursor.Render("▸") + mark + " " + st.Selected.Render(s.Name)
		} else {
			line = " " + line
		}
		row := []string{ansi.Truncate(line, w, "…")}
		if ok && !r.Pass && r.Error == "" && r.Consequence != "" {
			row = append(row, strings.Split(st.Bad.Render(common.Hang("   ", r.Consequence, w)), "\n")...)
		}
		rows = append(rows, row)
	}
	return strings.Join(append(head, window(st, rows, m.row, max(1, h-len(head)))...), "\n")
}

// window is as many of rows (each one or more lines) as fit in h lines,
// keeping row at on screen, with a line for the rows above and one for
// those below when there are any.
func window(st *common.Styles, rows [][]string, at, h int) []string {
	height := func(from, to int) int {
		n := 0
		for _, r := range rows[from:to] {
			n += len(r)
		}
		return n
	}
	if height(0, len(rows)) <= h {
		var out []string
		for _, r := range rows {
			out = append(out, r...)
		}
		return out
	}
	at = max(0, min(at, len(rows)-1))
	// Grow from the cursor's row: down first, then up, leaving room for
	// the hint lines.
	first, end := at, at+1
	fits := func(f, e int) bool {
		hints := 0
		if f > 0 {
			hints++
		}
		if e < len(rows) {
			hints++
		}
		return height(f, e)+hints <= h
	}
	for {
		switch {
		case end < len(rows) && fits(first, end+1):
			end++
		case first > 0 && fits(first-1, end):
			first--
		default:
			var out []string
			if first > 0 {
				out = append(out, st.Accent.Render(fmt.Sprintf("▲ %d more", first)))
			}
			for _, r := range rows[first:end] {
				out = append(out, r...)
			}
			if end < len(rows) {
				out = append(out, st.Accent.Render(fmt.Sprintf("▼ %d more", len(rows)-end)))
			}
			return out[:min(len(out), h)]
		}
	}
}

// challengesView lists the challenges, passed ones ticked.
func (m *Model) challengesView(w int) string {
	st := m.c.Styles
	lines := []string{st.BoxTitle.Render("Challenges")}
	passed := m.c.Progress.Get().Challenges
	for i, c := range quiz.Challenges() {
		mark := st.Faint.Render("·")
		if _, ok := passed[c.ID]; ok {
			mark = st.Good.Render("✓")
		}
		cur := "  "
		if i == m.chRow {
			cur = st.Cursor.Render("▸ ")
		}
		lines = append(lines, common.Hang(cur+mark+" ", c.Title, w))
	}
	return strings.Join(lines, "\n")
}

// detail is the whole text of what is under the cursor: the switch and its
// value, the scenario's verdict, or the challenge.
func (m *Model) detail(w int) string {
	st := m.c.Styles
	switch m.focus {
	case onScorecard:
		s := sim.Scenarios()[m.row]
		r, ok := m.results[s.Name]
		if !ok {
			return st.Subtle.Render(common.Hang("", s.Title+": not run yet", w))
		}
		mark, style := "✓ ", st.Good
		if !r.Pass {
			mark, style = "✗ ", st.Bad
		}
		out := st.Caption.Render(common.Hang("", s.Title, w)) + "\n" + style.Render(common.Hang(mark, r.Consequence, w))
		for _, inv := range r.Failed {
			out += "\n" + st.Bad.Render(common.Hang("  broken: ", inv, w))
		}
		return out
	case onChallenges:
		c := quiz.Challenges()[m.chRow]
		return st.Caption.Render(common.Hang("", c.Title, w)) + "\n" + common.Hang("", c.Prompt, w)
	}
	sw := m.switches[m.cursor]
	v := m.design.Get(sw.Name)
	out := st.Caption.Render(common.Hang("", sw.Name+": "+sw.Explain, w)) + "\n" +
		st.Subtle.Render(common.Hang("  "+v+": ", sim.Means(sw.Name, v), w))
	if why, ok := notApplying(m.design)[sw.Name]; ok {
		out += "\n" + st.Warn.Render(common.Hang("  does not apply: ", why, w))
	}
	return out
}

// notApplying maps each switch of d that acts on nothing to why.
func notApplying(d sim.Switches) map[string]string {
	out := map[string]string{}
	for _, na := range d.NotApplying() {
		out[na.Switch] = na.Why
	}
	return out
}
