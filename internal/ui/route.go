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

// cmdType is a command's type: Bubble Tea's batches and sequences are
// slices of it (a sequence's type is unexported, so it is known by shape).
var cmdType = reflect.TypeFor[tea.Cmd]()

// address makes cmd's message (and, for a batch or a sequence, each of its
// commands' messages, however deep) an addressed one for page id; messages
// for the root (open, back, saved progress) and Bubble Tea's own pass as
// they are. A sequence stays a sequence of the same type, so its order holds.
func address(id int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
			return nil
		case common.RootMsg:
			return msg
		}
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == cmdType {
			out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				out.Index(i).Set(reflect.ValueOf(address(id, v.Index(i).Interface().(tea.Cmd))))
			}
			return out.Interface()
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
