package workshop

import (
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// boom makes the app of the attendee it names panic: in Update, or (view)
// in the frames after it.
type boom struct {
	to   string
	view bool
}

// A bug in one attendee's app (a panic in its Update, or in its View)
// ends that session alone, with a line that says so and exit status 1;
// the presenter's feed is told; every other attendee goes on, and
// newcomers still get in.
func TestABugInOneSessionEndsItAlone(t *testing.T) {
	var mu sync.Mutex
	inView := map[string]bool{}
	w := startWorkshop(t, Config{sessionHook: func(name string, msg tea.Msg) {
		if msg == nil {
			mu.Lock()
			broken := inView[name]
			mu.Unlock()
			if broken {
				panic("a bug in " + name + "'s frame")
			}
			return
		}
		sent, _ := msg.(presenterMsg) // as the room delivers it
		if b, ok := sent.msg.(boom); ok && b.to == name {
			if b.view {
				mu.Lock()
				inView[name] = true
				mu.Unlock()
				return
			}
			panic("a bug in " + name + "'s update")
		}
	}})
	ada := attend(t, w, "ada", 80, 24, "", nil)
	ben := attend(t, w, "ben", 80, 24, "", nil)
	cal := attend(t, w, "cal", 80, 24, "", nil)
	for _, a := range []*attendee{ada, ben, cal} {
		a.waitFor("Play: the lost answer")
	}
	w.Room().SendAll(boom{to: "ada"}, "")
	w.Room().SendAll(boom{to: "cal", view: true}, "")
	for name, a := range map[string]*attendee{"ada": ada, "cal": cal} {
		if err := a.ended(); exitStatus(err) != 1 {
			t.Errorf("%s's session after the bug: %v, want exit status 1", name, err)
		}
		if !strings.Contains(a.raw.String(), "learn workshop: learn hit a bug and this session ends; your progress is kept: ssh again to go on. The presenter has been told.") {
			t.Errorf("%s was not told; the end of their output: %q", name, tail(a.raw.String()))
		}
	}
	feedHas(t, w, "ada's app hit a bug (a bug in ada's update): their session ends, and every other goes on")
	feedHas(t, w, "cal's app hit a bug (a bug in cal's frame): their session ends, and every other goes on")
	feedHas(t, w, "ada left after")
	ben.press("down")
	ben.waitFor("Interview card") // ben goes on
	dan := attend(t, w, "dan", 80, 24, "", nil)
	dan.waitFor("Play: the lost answer") // and newcomers get in
	if names, _ := connected(w); len(names) != 2 {
		t.Errorf("connected after the bugs: %v, want ben and dan", names)
	}
}
