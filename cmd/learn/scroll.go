package main

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// scroller shows a screen's body when it is taller than the window,
// following its end (where the choices, the verdict or the tally are)
// unless the learner scrolled up with page up.
type scroller struct {
	vp     viewport.Model
	follow bool
}

func newScroller() scroller { return scroller{vp: viewport.New(), follow: true} }

// view is body cut to w x h, at the end or where the learner scrolled.
func (s *scroller) view(body string, w, h int) string {
	s.vp.SetWidth(w)
	s.vp.SetHeight(max(1, h))
	s.vp.SetContent(body)
	if s.follow {
		s.vp.GotoBottom()
	}
	return s.vp.View()
}

// key scrolls on page up and page down; it reports whether it took msg.
func (s *scroller) key(msg tea.KeyPressMsg, k keyMap) bool {
	switch {
	case msg.String() == "pgup" || msg.String() == "ctrl+u":
		s.vp.PageUp()
		s.follow = false
		return true
	case msg.String() == "pgdown" || msg.String() == "ctrl+d":
		s.vp.PageDown()
		s.follow = s.vp.AtBottom()
		return true
	}
	return false
}

// reset follows the end again, for a new question or card.
func (s *scroller) reset() { s.follow = true }

// scrollKeys is the help line's entry for scrolling.
var scrollKeys = key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "scroll"))
