package main

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
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

	store   *quiz.Store    // where progress is saved; nil keeps it in memory
	prog    *quiz.Progress // the learner's progress as last saved
	notices []string       // what the home screen must tell (a damaged file moved aside)
	saver   *saver         // writes the changes in order; made on the first save
	saveSeq int            // number of the newest save
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
	screenQuiz
	screenDrill
)

// openMsg asks the root to show a screen: the reader on page slug, or the
// play screen on scenario name.
type openMsg struct {
	screen  screenID
	name    string
	variant sim.Variant // play: "" means correct
	section string      // reader: the section to open at
	step    int         // quiz: the question to start at
}

// backMsg asks the root to go back to the home screen.
type backMsg struct{}

func open(s screenID, name string) tea.Cmd {
	return func() tea.Msg { return openMsg{screen: s, name: name} }
}

func back() tea.Msg { return backMsg{} }
