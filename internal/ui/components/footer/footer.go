// Package footer draws the key hints under a page on one line that never
// runs past the window: the page's keys in its order of priority, then the
// pinned ones that must always show (back, help, quit). When not all fit,
// the least important go and "…" stands where they were; the whole list is
// in the ? overlay.
package footer

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Separator stands between two hints.
const Separator = " • "

// Ellipsis stands for the hints left out.
const Ellipsis = "…"

// View draws bindings, most important first, on one line of at most width
// cells: the ones pinned says must always show go to the end, in their
// order, the others before them. Disabled bindings are skipped. When not
// everything fits, the unpinned ones are dropped from the least important
// up and "…" takes their place; if even the pinned ones do not fit, the
// line is cut with "…".
func View(st help.Styles, bindings []key.Binding, width int, pinned func(key.Binding) bool) string {
	var page, pins []string
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		h := st.ShortKey.Inline(true).Render(b.Help().Key) + " " + st.ShortDesc.Inline(true).Render(b.Help().Desc)
		if pinned != nil && pinned(b) {
			pins = append(pins, h)
		} else {
			page = append(page, h)
		}
	}
	sep := st.ShortSeparator.Inline(true).Render(Separator)
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, sep)
	}
	if line := join(page, pins); lipgloss.Width(line) <= width {
		return line
	}
	more := []string{st.Ellipsis.Inline(true).Render(Ellipsis)}
	for n := len(page) - 1; n >= 0; n-- {
		if line := join(page[:n], more, pins); lipgloss.Width(line) <= width {
			return line
		}
	}
	return ansi.Truncate(join(more, pins), width, Ellipsis)
}
