package writeit

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim/check"
)

// View draws the screen in Width x Body() cells: the title and the state
// of the check on the first lines; then the ladder, the selected
// exercise's rows under it; then its goal, its hints taken and the
// cursor's row's verdict. An open row is its sequence instead.
func (m *Model) View() string {
	w, h := m.c.Width, m.c.Body()
	var out []string
	switch {
	case m.play != nil:
		out = m.playLines(w, h)
	case !m.present:
		out = m.missingView(w)
	default:
		out, m.shown = m.ladderView(w, h)
	}
	if len(out) > h {
		out = out[:h]
	}
	return strings.Join(out, "\n")
}

// wrap is text wrapped to w cells, as lines.
func wrap(text string, w int) []string {
	return strings.Split(lipgloss.NewStyle().Width(max(w, 10)).Render(text), "\n")
}

// missingView says the directory holds no exercises, and how to write
// them.
func (m *Model) missingView(w int) []string {
	st := m.c.Styles
	out := []string{st.Title.Render(common.Truncate("Write it yourself", w)), ""}
	out = append(out, wrap(fmt.Sprintf("There are no exercises in %s yet. Press i to write them there (as learn exercises init does): a small Go module whose BookTicket (booking.go) and tables (schema.sql) are yours to write, one exercise at a time, checked live by the lesson's scenarios on a real PostgreSQL each time you save.", m.dir), w)...)
	out = append(out, "", st.Subtle.Render(common.Truncate("You need Go "+exercises.MinGo+" or newer, and an editor in another window.", w)))
	out = append(out, wrap(st.Subtle.Render("Your exercises are elsewhere? Quit (q) and run learn exercises DIR with their directory: learn opens it from then on."), w)...)
	if m.err != nil {
		out = append(out, "")
		out = append(out, wrap(st.Bad.Render("Not written: "+m.err.Error()), w)...)
	}
	return out
}

// status is the lines under the title: what the check does, or when the
// one on screen was made and what it found; for one that ran nothing, why,
// and the pass count of the last that ran, said as such.
func (m *Model) status() string {
	st := m.c.Styles
	switch {
	case m.err != nil:
		return st.Bad.Render("the watch did not start (" + m.err.Error() + "): r checks again")
	case m.running:
		return st.Accent.Render(fmt.Sprintf("%s… (%s)", m.phase, time.Since(m.began).Round(100*time.Millisecond)))
	case m.runErr != nil:
		return st.Bad.Render("the check could not run: " + m.runErr.Error())
	case m.rep != nil && m.rep.Stopped != "":
		said := fmt.Sprintf("checked at %s: %s, so nothing was checked", m.checked.Format("15:04:05"), m.stoppedWhy())
		again := "saving a file checks again"
		if m.lastRan != nil {
			again = fmt.Sprintf("the last check that ran: %d of %d passed · %s", m.lastRan.Passed, len(m.lastRan.Exercises), again)
		}
		return st.Bad.Render(said) + "\n" + st.Subtle.Render(again)
	case m.rep != nil:
		return st.Subtle.Render(fmt.Sprintf("checked at %s, took %s · %d of %d passed · saving a file checks again", m.checked.Format("15:04:05"), m.rep.Took, m.rep.Passed, len(m.rep.Exercises)))
	}
	return ""
}

// stoppedWhy says what stopped a check that ran nothing, by the phase it
// stopped at: the build, the tables (schema.sql), or an API instance.
func (m *Model) stoppedWhy() string {
	switch {
	case m.stoppedAt == "building":
		return "your module did not build"
	case m.stoppedAt == "creating the tables":
		return "schema.sql did not create the tables"
	case strings.HasPrefix(m.stoppedAt, "starting"):
		return "an API instance of your module did not start"
	}
	return "the check stopped"
}

// stateOf is exercise i's state on screen.
func (m *Model) stateOf(i int) exercises.State {
	if m.rep == nil || i >= len(m.rep.Exercises) {
		return exercises.Unrun
	}
	return m.rep.Exercises[i].State
}

// mark is a state's mark in its colour.
func (m *Model) mark(s exercises.State) string {
	st := m.c.Styles
	switch s {
	case exercises.Passed:
		return st.Good.Render("✓")
	case exercises.Failing:
		return st.Bad.Render("✗")
	case exercises.Waiting:
		return st.Faint.Render("·")
	}
	return st.Faint.Render("?")
}

// rowMark is a check row's mark in its colour.
func (m *Model) rowMark(s check.State) string {
	st := m.c.Styles
	switch s {
	case check.Pass:
		return st.Good.Render(s.Mark())
	case check.Fail:
		return st.Bad.Render(s.Mark())
	}
	return st.Warn.Render(s.Mark())
}

// ladderView is the title, the status, the ladder with the selected
// exercise's rows, and the selected exercise's goal and the cursor's
// verdict, in w x h; on a small screen the ladder's lines around the
// cursor, and the detail from detailScroll on, as sc says.
func (m *Model) ladderView(w, h int) ([]string, scrolling) {
	st := m.c.Styles
	out := []string{st.Title.Render(common.Truncate("Write it yourself · "+m.dir, w))}
	out = append(append(out, wrap(m.status(), w)...), "")
	if m.rep != nil && m.rep.Stopped != "" && !m.running {
		said := "What went wrong:"
		if m.stoppedAt == "building" {
			said = "What the go command said:"
		}
		out = append(out, st.Bad.Render(said))
		for _, l := range strings.Split(m.rep.Stopped, "\n") {
			// Wrapped, never cut: the end of a line says what to do
			// (install a newer Go) or where (the compiler's column).
			for _, part := range wrap(l, w-2) {
				out = append(out, "  "+part)
			}
		}
		return out, scrolling{}
	}
	if m.rep != nil && !m.running {
		for _, said := range m.rep.Instances {
			lines := strings.Split("Your booking API "+said, "\n")
			for _, l := range lines[:min(len(lines), 4)] {
				out = append(out, st.Warn.Render(common.Truncate(l, w)))
			}
		}
	}
	var ladder []string
	cursorLine := 0
	for i, e := range exercises.Ladder {
		cursor := "  "
		if i == m.sel && m.row < 0 {
			cursor, cursorLine = st.Cursor.Render("› "), len(ladder)
		}
		title := fmt.Sprintf("%d. %s", i+1, e.Title)
		if e.ID == m.current() {
			title = st.Current.Render(title) + st.Subtle.Render("  ← now")
		}
		ladder = append(ladder, common.Truncate(cursor+m.mark(m.stateOf(i))+" "+title, w))
		if i != m.sel {
			continue
		}
		for j, r := range m.rowsOf(i) {
			cursor := "    "
			if j == m.row {
				cursor, cursorLine = "  "+st.Cursor.Render("› "), len(ladder)
			}
			ladder = append(ladder, common.Truncate(cursor+m.rowMark(r.State)+" "+r.Title, w))
			ladder = append(ladder, strings.Split(common.Hang("        ", st.Subtle.Render(check.Printable(r.Says)), w), "\n")...)
		}
	}
	if m.rep != nil && m.rep.Current == "" && !m.running {
		ladder = append(ladder, "", st.Good.Render(common.Truncate("Every exercise passes: your BookTicket holds in every scenario learn runs on it.", w)))
	}
	detail := m.detailLines(w)
	room := max(h-len(out)-len(detail)-1, min(4, len(ladder)))
	if room < len(ladder) {
		room-- // the line that says what is above and below
		first := min(max(cursorLine-room/2, 0), len(ladder)-room)
		var where []string
		if first > 0 {
			where = append(where, fmt.Sprintf("▲ %s above", common.Count(first, "line")))
		}
		if end := first + room; end < len(ladder) {
			where = append(where, fmt.Sprintf("▼ %d below", len(ladder)-end))
		}
		ladder = append(ladder[first:first+room], st.Accent.Render(common.Truncate(strings.Join(where, " · ")+" · ↑/↓ moves", w)))
	}
	out = append(out, ladder...)
	out = append(out, "")
	// The detail gets the lines left; what does not fit scrolls (pgdn,
	// pgup), a line saying what is above and below.
	var sc scrolling
	if room := h - len(out); len(detail) > room && room >= 2 {
		sc.page = room - 1
		sc.most = len(detail) - sc.page
		first := min(max(m.detailScroll, 0), sc.most)
		var where []string
		if first > 0 {
			where = append(where, fmt.Sprintf("▲ %s above", common.Count(first, "line")))
		}
		if end := first + sc.page; end < len(detail) {
			where = append(where, fmt.Sprintf("▼ %s below", common.Count(len(detail)-end, "line")))
		}
		detail = append(detail[first:first+sc.page:first+sc.page], st.Accent.Render(common.Truncate(strings.Join(where, " · ")+" · pgdn/pgup scrolls the explanation", w)))
	}
	return append(out, detail...), sc
}

// scrolling is how the detail under the ladder scrolls: most is the
// furthest it scrolls, in lines (0: it fits), page the lines it shows.
type scrolling struct{ most, page int }

// current is the exercise the learner is on: the first not passed.
func (m *Model) current() string {
	if m.rep == nil {
		return exercises.Ladder[0].ID
	}
	return m.rep.Current
}

// detailLines are the selected exercise's goal, where to write it, the
// hints taken, and the cursor's row's verdict and failed invariants.
func (m *Model) detailLines(w int) []string {
	st := m.c.Styles
	e := exercises.Ladder[m.sel]
	var out []string
	out = append(out, wrap(e.Goal, w)...)
	out = append(out, wrap(st.Subtle.Render(fmt.Sprintf("Write it in %s (the TODO(%s) lines) · the lesson: %s", e.File, e.ID, e.Lesson)), w)...)
	taken := m.c.Progress.Get().Exercises[e.ID].Hints
	for i := range min(taken, len(e.Hints)) {
		out = append(out, wrap(st.Accent.Render(fmt.Sprintf("Hint %d of %d for exercise %d: ", i+1, len(e.Hints), m.sel+1))+e.Hints[i], w)...)
	}
	if rows := m.rowsOf(m.sel); m.row >= 0 && m.row < len(rows) {
		r := rows[m.row]
		out = append(out, "")
		out = append(out, wrap(st.Caption.Render(r.Title)+": "+check.Printable(r.Says), w)...)
		if r.Report != nil {
			for _, inv := range r.Report.Verdict.Failed {
				out = append(out, wrap(st.Bad.Render("failed: "+inv.Name+" ("+check.Printable(inv.Detail)+")"), w)...)
			}
		}
		out = append(out, st.Subtle.Render(common.Truncate("enter plays it live on your code, a step at a time", w)))
	}
	return out
}
