// Package scroller shows a page's body when it is taller than the window,
// following its end (where the choices, the verdict or the tally are)
// unless the learner scrolled up, or held at its top with a line kept in
// view (a checklist whose cursor must show while the text above it is
// read).
package scroller

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// Model is a body cut to the window, at its end or where the learner
// scrolled with page up and page down.
type Model struct {
	vp     viewport.Model
	follow bool
}

// New returns a scroller that follows the end.
func New() Model { return Model{vp: viewport.New(), follow: true} }

// View is body cut to w x h.
func (s *Model) View(body string, w, h int) string {
	s.vp.SetWidth(w)
	s.vp.SetHeight(max(1, h))
	s.vp.SetContent(body)
	if s.follow {
		s.vp.GotoBottom()
	}
	return s.vp.View()
}

// ViewAt is body cut to w x h, scrolled as little as it takes from where
// it stands to show lines from to to (0-based; the first when they do not
// all fit). It stops following the end.
func (s *Model) ViewAt(body string, w, h, from, to int) string {
	s.follow = false
	s.vp.SetWidth(w)
	s.vp.SetHeight(max(1, h))
	s.vp.SetContent(body)
	off := s.vp.YOffset()
	if to >= off+s.vp.Height() {
		off = to - s.vp.Height() + 1
	}
	if from < off {
		off = from
	}
	s.vp.SetYOffset(off)
	return s.vp.View()
}

// Top holds the body at its top from the next view on, until Reset.
func (s *Model) Top() {
	s.follow = false
	s.vp.GotoTop()
}

// Key scrolls on page up and page down (also ctrl+u, ctrl+d); it reports
// whether it took msg.
func (s *Model) Key(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "pgup", "ctrl+u":
		s.vp.PageUp()
		s.follow = false
		return true
	case "pgdown", "ctrl+d":
		s.vp.PageDown()
		s.follow = s.vp.AtBottom()
		return true
	}
	return false
}

// Reset follows the end again, for a new question or card.
func (s *Model) Reset() { s.follow = true }

// Keys is the footer's entry for scrolling.
var Keys = key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "scroll"))
