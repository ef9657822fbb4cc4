package ui

import (
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
)

type pageMsg struct{ n int }

// run runs cmd as Bubble Tea's program would, reaching into batches and
// sequences, and returns every message it makes, in order for sequences.
func run(t *testing.T, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if msg == nil {
		return nil
	}
	v := reflect.ValueOf(msg)
	if v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		var out []tea.Msg
		for i := range v.Len() {
			out = append(out, run(t, v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// TestEveryMessageOfAPageCommandIsAddressedToIt: whether a page groups its
// commands in a batch, a sequence, or one inside the other, each message
// its commands make reaches that page, and Bubble Tea's own (quit) pass.
func TestEveryMessageOfAPageCommandIsAddressedToIt(t *testing.T) {
	one := func(n int) tea.Cmd { return func() tea.Msg { return pageMsg{n} } }
	for name, cmd := range map[string]tea.Cmd{
		"batch":             tea.Batch(one(1), one(2)),
		"sequence":          tea.Sequence(one(1), one(2)),
		"sequence in batch": tea.Batch(tea.Sequence(one(1), one(2))),
		"batch in sequence": tea.Sequence(tea.Batch(one(1)), one(2)),
	} {
		t.Run(name, func(t *testing.T) {
			msgs := run(t, address(7, cmd))
			if len(msgs) != 2 {
				t.Fatalf("%d messages, want 2: %#v", len(msgs), msgs)
			}
			for i, m := range msgs {
				a, ok := m.(addressed)
				if !ok || a.to != 7 || a.msg != (pageMsg{i + 1}) {
					t.Errorf("message %d is %#v, want addressed{to: 7, msg: pageMsg{%d}}", i, m, i+1)
				}
			}
		})
	}
	if msgs := run(t, address(7, tea.Sequence(one(1), tea.Quit))); len(msgs) != 2 || msgs[1] != (tea.QuitMsg{}) {
		t.Errorf("quit in a sequence became %#v, want it to pass as Bubble Tea's own", msgs)
	}
}
