// Package textbox is the text box of a short answer or a spoken one: a
// bubbles textarea that takes every key while the learner writes, tab
// ending the writing and esc going back.
package textbox

import (
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// Model is a text box.
type Model = textarea.Model

// New is a text box of h lines for a window w cells wide, its placeholder
// in st's placeholder style (readable on a projector).
func New(st *common.Styles, placeholder string, w, h int) Model {
	t := textarea.New()
	s := textarea.DefaultStyles(st.Dark)
	s.Focused.Placeholder, s.Blurred.Placeholder = st.Placeholder, st.Placeholder
	t.SetStyles(s)
	t.Placeholder = placeholder
	t.ShowLineNumbers = false
	t.SetWidth(Width(w))
	t.SetHeight(h)
	return t
}

// Width is the width of a text box in a window w cells wide.
func Width(w int) int { return max(20, min(w-4, 90)) }

// Paste gives a bracketed paste (what a terminal sends for Ctrl-Shift-V or
// a middle click) to a text box that has the focus: its lines stay lines.
// Without focus the paste is dropped, as the box is not being written.
func Paste(t *Model, msg tea.PasteMsg) tea.Cmd {
	if !t.Focused() {
		return nil
	}
	var cmd tea.Cmd
	*t, cmd = t.Update(msg)
	return cmd
}

// Type gives a key to a text box: tab ends the writing (done), esc asks the
// root to go back, any other key edits the text.
func Type(t *Model, msg tea.KeyPressMsg) (done bool, cmd tea.Cmd) {
	switch msg.String() {
	case "tab":
		t.Blur()
		return true, nil
	case "esc":
		return false, common.BackCmd
	}
	*t, cmd = t.Update(msg)
	return false, cmd
}
