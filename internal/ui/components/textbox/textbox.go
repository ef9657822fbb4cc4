// Package textbox is the text box of a short answer or a spoken one: a
// bubbles textarea that takes every key while the learner writes, tab
// ending the writing and esc going back. It holds at most MaxChars
// characters, whatever is typed or pasted, and says so when full.
package textbox

import (
	"fmt"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// Model is a text box.
type Model = textarea.Model

// MaxChars is the most characters a text box holds: a spoken answer of a
// minute is under a thousand. A paste of more keeps its beginning, and
// every key stays as quick as in a short answer.
const MaxChars = 2000

// New is a text box of h lines for a window w cells wide, its placeholder
// in st's placeholder style (readable on a projector).
func New(st *common.Styles, placeholder string, w, h int) Model {
	t := textarea.New()
	s := textarea.DefaultStyles(st.Dark)
	s.Focused.Placeholder, s.Blurred.Placeholder = st.Placeholder, st.Placeholder
	t.SetStyles(s)
	t.Placeholder = placeholder
	t.ShowLineNumbers = false
	t.CharLimit = MaxChars
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

// Full is the line that says t holds all it can, or "" while it has room.
func Full(st *common.Styles, t Model) string {
	if t.Length() < MaxChars {
		return ""
	}
	return st.Warn.Render(fmt.Sprintf("the box holds at most %d characters: the rest was not kept", MaxChars))
}
