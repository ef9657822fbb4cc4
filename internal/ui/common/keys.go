package common

import (
	"charm.land/bubbles/v2/key"
)

// KeyMap holds every key binding of the app. Pages show the bindings that
// apply to them through a Bindings value built from it.
type KeyMap struct {
	Up, Down, Open, Back, Quit, Help key.Binding
	PageUp, PageDown, Top, Bottom    key.Binding
	NextSection, PrevSection         key.Binding
	Play, Step, Restart              key.Binding
	Faster, Slower                   key.Binding
	Variant, StepBack, Present       key.Binding
	Search, NextMatch, PrevMatch     key.Binding
	Contents                         key.Binding
	Toggle, MoveUp, MoveDown         key.Binding
	MarkRead                         key.Binding
}

// NewKeyMap returns the app's key bindings.
func NewKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Open:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "f", "space"), key.WithHelp("pgdn/f", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		NextSection: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next section")),
		PrevSection: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous section")),
		Play:        key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "play/pause")),
		Step:        key.NewBinding(key.WithKeys("n", "right", "pgdown"), key.WithHelp("n/→/pgdn", "step")),
		StepBack:    key.NewBinding(key.WithKeys("p", "left", "pgup"), key.WithHelp("p/←/pgup", "back a step")),
		Present:     key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "presenter mode")),
		Restart:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		Faster:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster")),
		Slower:      key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "slower")),
		Variant:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "correct/broken")),
		Search:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		NextMatch:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		PrevMatch:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		Contents:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "contents")),
		Toggle:      key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "tick")),
		MoveUp:      key.NewBinding(key.WithKeys("K", "shift+up"), key.WithHelp("K", "move step up")),
		MoveDown:    key.NewBinding(key.WithKeys("J", "shift+down"), key.WithHelp("J", "move step down")),
		MarkRead:    key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "mark read/unread")),
	}
}

// Bindings is a help.KeyMap made of a short list (the footer) and full
// groups (the ? overlay).
type Bindings struct {
	Short []key.Binding
	Full  [][]key.Binding
}

// ShortHelp is the footer's bindings.
func (b Bindings) ShortHelp() []key.Binding { return b.Short }

// FullHelp is the overlay's groups of bindings.
func (b Bindings) FullHelp() [][]key.Binding { return b.Full }
