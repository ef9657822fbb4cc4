package writeit

import (
	"fmt"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/learn-idempotency/learn/internal/ui/common"
)

// Keys of the screen.
var (
	keyHint    = key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "a hint"))
	keyCheck   = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "check again"))
	keyInit    = key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "write the exercises here"))
	keyPlayRow = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "play it live"))
	keyPlay    = key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "plays"))
	keyPause   = key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pauses"))
	// keyScroll names the keys that scroll the explanation under the
	// ladder (the key map's PageDown and PageUp).
	keyScroll = key.NewBinding(key.WithKeys("pgdown", "pgup"), key.WithHelp("pgdn/pgup", "scroll the explanation"))
)

// Legend says what the marks of the ladder and its rows mean, in one
// line: an exercise's (✓ ✗ · ?) and a check row's (check.State's Mark).
const Legend = "✓ pass ✗ fail ? not checked – not run ! error · earlier fails"

// HelpNotes is the legend of the marks, for the ? overlay.
func (m *Model) HelpNotes() []string { return []string{"Marks: " + Legend} }

// KeyMap is the screen's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	if m.play != nil {
		// space says what it does now: the play is held, or plays.
		space := keyPlay
		if m.play.playing {
			space = keyPause
		}
		if m.play.done || m.play.stopped != "" {
			// The run has ended: nothing is left to play.
			return common.Bindings{
				Short: []key.Binding{k.Step, k.StepBack, k.Bottom, k.Back, k.Help},
				Full:  [][]key.Binding{{k.Step, k.StepBack, k.Top, k.Bottom}, {k.Up, k.Down}, {k.Back, k.Help, k.Quit}},
			}
		}
		return common.Bindings{
			Short: []key.Binding{space, k.Step, k.StepBack, k.Back, k.Help},
			Full:  [][]key.Binding{{space, k.Step, k.StepBack, k.Top, k.Bottom}, {k.Up, k.Down}, {k.Back, k.Help, k.Quit}},
		}
	}
	if !m.present {
		return common.Bindings{Short: []key.Binding{keyInit, k.Back, k.Help}, Full: [][]key.Binding{{keyInit}, {k.Back, k.Help, k.Quit}}}
	}
	hint := key.NewBinding(key.WithKeys("h"), key.WithHelp("h", fmt.Sprintf("a hint for %d", m.hintFor()+1)))
	short := []key.Binding{hint, keyCheck, k.Up, k.Down, k.Back, k.Help}
	if m.row >= 0 {
		// Enter plays a check's row; an exercise's own line has none.
		short = append([]key.Binding{keyPlayRow}, short...)
	}
	if m.shown.most > 0 { // as the last frame drew it: the footer draws after the page
		// The explanation does not fit: its key first.
		short = append([]key.Binding{keyScroll}, short...)
	}
	return common.Bindings{
		Short: short,
		Full:  [][]key.Binding{{k.Up, k.Down, keyPlayRow, keyScroll}, {hint, keyCheck}, {k.Back, k.Help, k.Quit}},
	}
}
