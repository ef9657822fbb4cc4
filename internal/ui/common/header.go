package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Header is a page's header on exactly one line of w cells: title in the
// title style, then rest (" · the section", " · question 2 of 5") subtle,
// then right (a position, a status) at the right edge. When they do not
// all fit, right stays whole and rest, then title, are cut with "…": the
// whole text must be on the page elsewhere (its body, its contents, the
// scenario's explanation). A right too wide for w is cut too.
func Header(st *Styles, title, rest, right string, w int) string {
	if w <= 0 {
		return ""
	}
	right = Truncate(right, w)
	rw := ansi.StringWidth(right)
	room := w - rw
	if rw > 0 {
		room-- // at least one space before right
	}
	left := title + rest
	if ansi.StringWidth(left) > room {
		left = Truncate(left, room)
	}
	lw := ansi.StringWidth(left)
	tw := min(ansi.StringWidth(title), lw)
	styled := st.Title.Render(ansi.Cut(left, 0, tw)) + st.Subtle.Render(ansi.Cut(left, tw, lw))
	if right == "" {
		return styled
	}
	return styled + strings.Repeat(" ", max(0, w-lw-rw)) + st.Subtle.Render(right)
}
