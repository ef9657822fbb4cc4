// Package common is what every page of the app shares: the per-terminal
// state (size, styles, keys, presenter mode) in Common, the learner's live
// runs and progress, the page contract (Page, and Stand: where a page
// stands, as a progress.Place, the one identity of a screen) and the
// messages pages send to the root (Open, which carries the Place to open,
// and Back).
//
// One Common exists per terminal: the local one, or one per SSH session of
// a workshop. The database (live.Postgres) and the cache of rendered pages
// (Docs) may be shared between them.
package common

import (
	"context"
	"fmt"
	"time"

	"github.com/learn-idempotency/learn/internal/live"
)

// Smallest window the app draws in.
const (
	MinWidth  = 60
	MinHeight = 20
)

// Largest window the app draws in, in cells, as a workshop's sessions are
// capped (internal/workshop/size.go): the frame, Glamour's wrapping and a
// play screen's panes grow with the cells, and resizes up to 1000x1000
// took the local app to 449 MiB resident. A larger window is drawn in its
// top left. Real terminals are smaller: full screen on a 4K display at a
// small font is 480x135.
const (
	MaxWidth  = 500
	MaxHeight = 200
)

// CapSize is w x h bounded by MaxWidth x MaxHeight.
func CapSize(w, h int) (int, int) { return min(w, MaxWidth), min(h, MaxHeight) }

// Common is the state of one terminal that every page reads. Pages hold a
// pointer to it; only the root writes it.
type Common struct {
	// Ctx ends when the app (or the SSH session) ends; everything a page
	// starts runs under it.
	Ctx context.Context
	// Width and Height are the window's size in cells.
	Width, Height int
	Styles        *Styles
	Keys          KeyMap
	// Theme is "dark" or "light"; DocStyle the Glamour style of the pages.
	Theme, DocStyle string
	// Present is presenter mode: big captions, no chrome; PresentSince is
	// when it began, for its clock. Presenting is whether the page on screen
	// is drawn in it now: Present, on a page that has a presenter mode (the
	// root sets it).
	Present      bool
	PresentSince time.Time
	Presenting   bool

	// DB is the PostgreSQL the live runs use; Runs owns them.
	DB   *live.Postgres
	Runs *live.Runs
	// Progress is the learner's saved progress.
	Progress *Progress
	// Docs caches the rendered pages.
	Docs *Docs
	// Suspendable is whether Ctrl+Z suspends the app as a job (the local
	// terminal, in a shell with job control; never over SSH).
	Suspendable bool
	// ExercisesDir is the directory of learn exercises' module (the
	// learner's own code, built and run on this machine); "" where the
	// exercises are not offered (over SSH: the code would run on the
	// presenter's machine).
	ExercisesDir string
}

// NoExercises is why the exercises are not offered over SSH, in one line
// (the home screen says it in place of their entry).
const NoExercises = "the exercises build and run your own code, which over SSH would run on the presenter's machine: run learn exercises on yours"

// Body is the height a page may draw in: the window without the footer,
// or the whole window in presenter mode.
func (c *Common) Body() int {
	if c.Presenting {
		return c.Height
	}
	return c.Height - 1
}

// Clock is the presenter's clock, "mm:ss" since presenter mode began.
func (c *Common) Clock() string {
	d := time.Since(c.PresentSince).Truncate(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// Now is the time progress is stamped with.
func Now() time.Time { return time.Now() }
