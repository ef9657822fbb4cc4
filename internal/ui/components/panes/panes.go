// Package panes draws the side panes of a live run: a titled box, the rows
// of the booking tables as read after a step, and the SQL and API log
// lines of the trace.
package panes

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// Box draws a bordered pane of exactly w x h cells: the title on its first
// line, then the last lines that fit.
func Box(st *common.Styles, title string, lines []string, w, h int) string {
	inner := max(0, h-3) // borders and the title
	if len(lines) > inner {
		lines = lines[len(lines)-inner:]
	}
	body := st.BoxTitle.Render(common.Truncate(title, w-4)) + "\n" + strings.Join(lines, "\n")
	return st.Box.Width(w).Height(h).MaxHeight(h).Padding(0, 1).Render(body)
}

// Rows lists the tables as read after a step in at most room lines of w
// cells: every event with its seats left out of seats (each event's seats
// at the start), then the newest bookings in aligned columns, saying how
// many older ones do not fit. Keys are shown by their first 8 hex digits.
func Rows(st *common.Styles, rows sim.Rows, seats, w, room int) []string {
	var out []string
	for _, e := range rows.Events {
		out = append(out, common.Truncate(fmt.Sprintf("event %d  seats_left %d/%d", e.ID, e.SeatsLeft, seats), w))
	}
	bs := rows.Bookings
	if len(bs) == 0 {
		return append(out, st.Subtle.Render("bookings: none"))
	}
	more := ""
	if fitIn := room - len(out) - 1; len(bs) > fitIn && fitIn > 1 { // a line for the column names
		hidden := len(bs) - (fitIn - 1) // and one to say what is hidden
		bs = bs[hidden:]
		more = st.Faint.Render(fmt.Sprintf("… %s not shown", common.Count(hidden, "older row")))
	}
	table := [][]string{{"id", "user", "event", "qty", "key"}}
	for _, b := range bs {
		table = append(table, []string{b.ID, b.UserID, fmt.Sprint(b.EventID), fmt.Sprint(b.Quantity), shortKey(b.Key)})
	}
	lines := Columns(table)
	out = append(out, st.Subtle.Render(common.Truncate(lines[0], w)))
	if more != "" {
		out = append(out, more)
	}
	for _, l := range lines[1:] {
		out = append(out, common.Truncate(l, w))
	}
	return out
}

// shortKey is a key's first 8 hex digits, as the captions say it.
func shortKey(k string) string {
	if head, _, ok := strings.Cut(k, "-"); ok {
		return head
	}
	return k
}

// Columns lays out cells in columns one space apart, each as wide as its
// widest cell in display cells (so a wide character does not shift the
// columns after it); the last column is not padded.
func Columns(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	out := make([]string, len(rows))
	for n, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+1))
			}
		}
		out[n] = b.String()
	}
	return out
}

// Trace lists the events of the given kinds, SQL as sent and API log lines,
// each wrapped to w cells with its continuation indented.
func Trace(st *common.Styles, events []sim.Event, w int, kinds ...sim.Kind) []string {
	var out []string
	add := func(tag lipgloss.Style, name, text string) {
		for i, l := range strings.Split(ansi.Wrap(text, max(8, w-4), " ,"), "\n") {
			if i == 0 {
				out = append(out, tag.Render(name)+" "+l)
			} else {
				out = append(out, "    "+l)
			}
		}
	}
	for _, ev := range events {
		for _, k := range kinds {
			if ev.Kind != k {
				continue
			}
			switch k {
			case sim.KindSQL:
				add(st.SQLTag, "SQL", ev.Text)
			case sim.KindLog:
				add(st.LogTag, "LOG", strings.ToLower(ev.Level)+": "+ev.Text)
			}
		}
	}
	return out
}
