package main

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/pgtemp"
)

// common is what every screen shares: the window size, the styles, the key
// map, the database and the cache of rendered pages.
type common struct {
	width, height int
	st            *styles
	keys          keyMap
	theme         string // "dark" or "light"
	docStyle      string // Glamour style
	db            *dbLauncher
	dbReady       bool
	dbErr         error
	dbTook        time.Duration
	srv           *pgtemp.Server
	docs          map[docKey]string
	present       bool      // presenter mode: big captions, no chrome
	presentSince  time.Time // when presenter mode began, for its clock
}

// docKey identifies one rendering of a page.
type docKey struct {
	slug  string
	width int
}

// screen ids, for routing.
type screenID int

const (
	screenHome screenID = iota
	screenReader
	screenPlay
	screenPicker
	screenRace
)

// openMsg asks the root to show a screen: the reader on page slug, or the
// play screen on scenario name.
type openMsg struct {
	screen  screenID
	name    string
	variant sim.Variant // play: "" means correct
}

// backMsg asks the root to go back to the home screen.
type backMsg struct{}

func open(s screenID, name string) tea.Cmd {
	return func() tea.Msg { return openMsg{screen: s, name: name} }
}

func back() tea.Msg { return backMsg{} }
