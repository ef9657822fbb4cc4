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
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Box draws a bordered pane of exactly w x h cells: the title on its first
// line, then the last lines that fit, the first of them saying how many
// lines are above when some are.
func Box(st *common.Styles, title string, lines []string, w, h int) string {
	inner := max(0, h-3) // borders and the title
	if len(lines) > inner {
		hidden := len(lines) - inner + 1
		lines = append([]string{st.Faint.Render(common.Truncate(fmt.Sprintf("▲ %s above", common.Count(hidden, "line")), w-4))}, lines[hidden:]...)
		if inner == 0 {
			lines = nil
		}
	}
	body := st.BoxTitle.Render(common.Truncate(title, w-4)) + "\n" + strings.Join(lines, "\n")
	return st.Box.Width(w).Height(h).MaxHeight(h).Padding(0, 1).Render(body)
}

// Rows lists the tables as read after a step in at most room lines of w
// cells: every event with its seats left out of seats (each event's seats
// at the start), then the column names and the newest bookings in aligned
// columns, saying how many older ones do not fit. Keys are shown by their
// first 8 hex digits.
func Rows(st *common.Styles, rows engine.Rows, seats, w, room int) []string {
	return RowsFrom(st, rows, seats, w, room, 0)
}

// RowsFrom is Rows scrolled up by skip bookings from the newest: the
// bookings hidden above and below are counted on a line of their own. It
// never returns more than room lines (when room is at least 1): the column
// names come before any booking, and when even one booking does not fit
// with them, a line says how many rows there are.
func RowsFrom(st *common.Styles, rows engine.Rows, seats, w, room, skip int) []string {
	var out []string
	for _, e := range rows.Events {
		out = append(out, common.Truncate(fmt.Sprintf("event %d  seats_left %d/%d", e.ID, e.SeatsLeft, seats), w))
	}
	bs := rows.Bookings
	if len(bs) == 0 {
		out = append(out, st.Subtle.Render("bookings: none"))
		return out[max(0, len(out)-max(1, room)):]
	}
	if len(out) > room-2 { // the events leave no room for a booking: keep the newest events
		out = out[min(len(out), max(0, len(out)-(room-1))):]
		return append(out, st.Faint.Render(common.Truncate(common.Count(len(bs), "booking row")+" · more room shows them", w)))[max(0, len(out)+1-max(1, room)):]
	}
	fit := room - len(out) - 1 // the column names
	skip = max(0, min(skip, len(bs)-1))
	end := len(bs) - skip
	first := max(0, end-fit)
	hints := func() int { // lines to say what is above and below
		n := 0
		if first > 0 {
			n++
		}
		if end < len(bs) {
			n++
		}
		return n
	}
	for end-first > 1 && end-first+hints() > fit {
		first++
	}
	if end-first+hints() > fit { // not one booking with what hides it: say how many
		out = append(out, st.Faint.Render(common.Truncate(common.Count(len(bs), "booking row")+" not shown", w)))
		return out[max(0, len(out)-max(1, room)):]
	}
	table := [][]string{{"id", "user", "event", "qty", "key"}}
	for _, b := range bs[first:end] {
		table = append(table, []string{b.ID, b.UserID, fmt.Sprint(b.EventID), fmt.Sprint(b.Quantity), shortKey(b.Key)})
	}
	lines := Columns(table)
	out = append(out, st.Subtle.Render(common.Truncate(lines[0], w)))
	if first > 0 {
		out = append(out, st.Faint.Render(common.Truncate(fmt.Sprintf("… %s not shown", common.Count(first, "older row")), w)))
	}
	for _, l := range lines[1:] {
		out = append(out, common.Truncate(l, w))
	}
	if end < len(bs) {
		out = append(out, st.Faint.Render(common.Truncate(fmt.Sprintf("… %d newer below", len(bs)-end), w)))
	}
	return out[:min(len(out), max(1, room))]
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
func Trace(st *common.Styles, events []trace.Event, w int, kinds ...trace.Kind) []string {
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
			case trace.KindSQL:
				add(st.SQLTag, "SQL", ev.Text)
			case trace.KindLog:
				add(st.LogTag, "LOG", strings.ToLower(ev.Level)+": "+ev.Text)
			}
		}
	}
	return out
}
