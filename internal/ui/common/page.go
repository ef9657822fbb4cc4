package common

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// Page is one screen of the app. The root model keeps a stack of pages,
// gives key presses and window sizes to the page on top, and hands every
// message that a page's command produced back to that page, by the page's
// identity, whichever page is on top (see the root's routing). Pages are
// pointers and change in place, so Update returns only a command.
type Page interface {
	// Init starts what the page needs (rendering, a live run).
	Init() tea.Cmd
	// Update handles a message: a key press, or the result of one of the
	// page's own commands.
	Update(msg tea.Msg) tea.Cmd
	// View draws the page in Common.Width x Common.Body() cells.
	View() string
	// Title names the page, for the window title and the presenter's view
	// of the room. It is words for people, never the page's identity:
	// that is Stand's At.
	Title() string
	// KeyMap is the page's key bindings, for the footer and the ? overlay.
	KeyMap() help.KeyMap
	// Stand is where the page stands: the place on screen, and where the
	// next start of learn comes back to.
	Stand() Stand
}

// Stand is where a page stands. What is on screen (At) and where the next
// start of learn continues (Next) differ: a quiz question answered, its
// feedback on screen, continues at the next question; a scenario played
// under a design of the lab is on screen but no place to come back to.
type Stand struct {
	// At is the place on screen. Its Page is always the page's own, so
	// the room knows which screen an attendee is on whatever the title.
	At progress.Place
	// Reopens is whether At names this screen, so that opening At gives
	// this screen again: false where no Open gives it back (a quiz set's
	// summary, a play under a design of the lab, the drill once done).
	// Only then is an attendee at At "already there" when the presenter
	// sends the room to At.
	Reopens bool
	// Next is where the next start of learn continues: the place the home
	// page offers to resume, saved as the learner moves. The zero Place
	// clears the spot saved before (a finished quiz: nothing is left to
	// come back to).
	Next progress.Place
	// Keep leaves the spot saved before as it is, whatever Next says: the
	// page is no place of its own to come back to (home, the scenario
	// list, the race, the lab, a play under a design of the lab).
	Keep bool
}

// SameScreen reports whether places a and b are on one screen: the same
// page and name, the same variant of a scenario (none is its correct
// one), and for a quiz the same question. A lesson's section and the
// drill's prompt are where the learner is on one screen, which they move
// through themselves; a quiz's question is a screen of its own, since the
// presenter sends the room to one. The zero Place is on no screen.
func SameScreen(a, b progress.Place) bool {
	if a.Page == "" || a.Page != b.Page || a.Name != b.Name {
		return false
	}
	switch a.Page {
	case progress.PagePlay:
		return variant(a) == variant(b)
	case progress.PageQuiz:
		return a.Step == b.Step
	}
	return true
}

// variant is the design a play place names: its Variant, or the correct
// one when it names none.
func variant(p progress.Place) sim.Variant {
	if p.Variant == "" {
		return sim.Correct
	}
	return sim.Variant(p.Variant)
}

// Capturer is a page whose text box may take every key, q included.
type Capturer interface{ Capturing() bool }

// Closer is a page that holds something with a life (a live run): Close
// stops it when the page goes away. It must not block.
type Closer interface{ Close() }

// HelpNoter is a page whose ? overlay says more than its keys: HelpNotes
// are lines drawn under them, each at most 70 cells (a legend of the
// page's marks).
type HelpNoter interface{ HelpNotes() []string }

// PresenterMode, embedded in a page, gives it a presenter mode (P): big
// captions, no chrome. On other pages P does nothing and is not offered.
type PresenterMode struct{}

func (PresenterMode) presenterMode() {}

// Presents reports whether page p has a presenter mode (PresenterMode).
func Presents(p Page) bool {
	_, ok := p.(interface{ presenterMode() })
	return ok
}

// TakesMouse, embedded in a page, makes it take the mouse (the wheel
// scrolls it) while it is on screen; elsewhere the terminal keeps its own
// selection.
type TakesMouse struct{}

func (TakesMouse) takesMouse() {}

// WantsMouse reports whether page p takes the mouse (TakesMouse).
func WantsMouse(p Page) bool {
	_, ok := p.(interface{ takesMouse() })
	return ok
}

// Open asks the root to open the page at Place on top of the one on
// screen: the reader on page Name (at Section), the play screen on scenario
// Name in Variant (or under Design, a design of the lab), a quiz set Name
// (at question Step, counted from 0; a Step of 0 continues an unfinished
// attempt where it stopped, unless Exact), the drill at Step.
type Open struct {
	progress.Place
	// Design plays scenario Name under a design of the lab: a play no
	// Place names, so it is an option of opening only.
	Design *sim.Switches
	// Exact opens question Step itself, the first one included, whatever
	// the learner answered before: the presenter's screen is the room's.
	Exact bool
}

// Back asks the root to close the page on top and show the one under it.
type Back struct{}

// Notice asks the root to show Text in place of the footer until the next
// key: what a key could not do, and why.
type Notice struct{ Text string }

// RootMsg marks the messages that go to the root rather than to the page
// whose command made them.
type RootMsg interface{ rootMsg() }

func (Open) rootMsg() {}
func (Back) rootMsg() {}

// OpenCmd asks the root to open o.
func OpenCmd(o Open) tea.Cmd { return func() tea.Msg { return o } }

// BackCmd asks the root to go back.
func BackCmd() tea.Msg { return Back{} }
