package ui

import (
	"reflect"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// addressed is a message made by a command of the page with id to: the
// root gives it to that page, whichever page is on top, and drops it once
// that page is gone. This is how background work (a run's events, a
// rendering, a spinner's tick) reaches the page that started it.
type addressed struct {
	to  int
	msg tea.Msg
}

// teaPkg is Bubble Tea's package path: its own messages (quit, batches,
// sequences, terminal requests) are for the program, not for a page.
var teaPkg = reflect.TypeFor[tea.QuitMsg]().PkgPath()

// address makes cmd's message (and, for a batch, each of its commands'
// messages) an addressed one for page id; messages for the root (open,
// back, saved progress) and Bubble Tea's own pass as they are.
func address(id int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
			return nil
		case tea.BatchMsg:
			out := make(tea.BatchMsg, len(msg))
			for i, c := range msg {
				out[i] = address(id, c)
			}
			return out
		case common.RootMsg:
			return msg
		}
		t := reflect.TypeOf(msg)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.PkgPath() == teaPkg {
			return msg
		}
		return addressed{to: id, msg: msg}
	}
}
