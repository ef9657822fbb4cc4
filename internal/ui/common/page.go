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
	// Title names the page, for the window title.
	Title() string
	// KeyMap is the page's key bindings, for the footer and the ? overlay.
	KeyMap() help.KeyMap
}

// Sizer is a page that lays itself out again when the window changes.
type Sizer interface{ SetSize(width, height int) }

// Capturer is a page whose text box may take every key, q included.
type Capturer interface{ Capturing() bool }

// Closer is a page that holds something with a life (a live run): Close
// stops it when the page goes away. It must not block.
type Closer interface{ Close() }

// Presenter is a page with a presenter mode (P): big captions, no chrome.
// On other pages P does nothing and is not offered.
type Presenter interface{ Presents() bool }

// Mouser is a page that takes the mouse (the wheel scrolls it) while it is
// on screen; elsewhere the terminal keeps its own selection.
type Mouser interface{ WantsMouse() bool }

// Resumer is a page the next start of learn can reopen, where the learner
// left it; ok is false when there is nothing to resume there.
type Resumer interface {
	Resume() (r progress.Resume, ok bool)
}

// Reopener is a page whose place for the next start is not simply the one
// it shows (Resumer): a quiz question answered, its feedback on screen,
// continues at the next question; a scenario played under a design of the
// lab has no place of its own. Reopen is that place (the zero Resume when
// nothing is left to come back to: the saved spot is cleared), or keep is
// true to leave the spot saved before as it is. The root asks Reopen
// before Resume.
type Reopener interface {
	Reopen() (at progress.Resume, keep bool)
}

// Kind names a page the root can open.
type Kind int

// The pages.
const (
	PageHome Kind = iota
	PageReader
	PagePlay
	PagePicker
	PageRace
	PageQuiz
	PageDrill
	PageLab
)

// Open asks the root to open a page on top of the one on screen: the reader
// on page Name (at Section), the play screen on scenario Name in Variant
// (or under Design, a design of the lab), a quiz set Name (at question
// Step, counted from 0; a Step of 0 continues an unfinished attempt where
// it stopped, unless Exact).
type Open struct {
	Page    Kind
	Name    string
	Variant sim.Variant
	Design  *sim.Switches
	Section string
	Step    int
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
