package workshop

import (
	"testing"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// renamed is a screen of the app under another title than its own: the
// place the page says it stands at, and a title it was never given.
type renamed struct {
	title string
	at    progress.Place
}

func (r *renamed) Init() tea.Cmd          { return nil }
func (r *renamed) Update(tea.Msg) tea.Cmd { return nil }
func (r *renamed) View() string           { return r.title }
func (r *renamed) Title() string          { return r.title }
func (r *renamed) KeyMap() help.KeyMap    { return common.Bindings{} }
func (r *renamed) Stand() common.Stand    { return common.Stand{At: r.at, Reopens: true, Keep: true} }

// The presenter sends the room to a screen an attendee is on already:
// their app keeps it as it is (a run goes on, an answer half typed stays).
// What the screen is must not depend on its title: a page whose title
// changes (a new name in the menu, a count in it) is still that screen,
// and another screen under the same title is not. Before, the race, the
// scenario list and the lab were recognised by their titles ("Race",
// "Scenarios", "Design lab") and reopened under any other.
func TestAScreenIsTheSameWhateverItsTitle(t *testing.T) {
	cases := []struct {
		name  string
		on    *renamed
		send  common.Open
		there bool // the app keeps the screen on top
	}{
		{"the race", &renamed{"Race: ten copies at once", progress.Place{Page: progress.PageRace}}, common.Open{Place: progress.Place{Page: progress.PageRace}}, true},
		{"the scenario list", &renamed{"Every scenario", progress.Place{Page: progress.PagePicker}}, common.Open{Place: progress.Place{Page: progress.PagePicker}}, true},
		{"the lab", &renamed{"The design lab", progress.Place{Page: progress.PageLab}}, common.Open{Place: progress.Place{Page: progress.PageLab}}, true},
		{"a scenario", &renamed{"Lost answer", progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Correct)}},
			common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, true},
		{"a question", &renamed{"Checkpoint (renamed)", progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}},
			common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}, Exact: true}, true},
		{"another screen under the race's title", &renamed{"Race", progress.Place{Page: progress.PageLab}}, common.Open{Place: progress.Place{Page: progress.PageRace}}, false},
		{"another question", &renamed{"Checkpoint", progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 1}},
			common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}, Exact: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seat, err := room.New(4).Join("ada", "192.0.2.1:50000", 80, 24, func(any) {})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { seat.Leave("the test ended") })
			c := &common.Common{Ctx: t.Context(), Width: 80, Height: 24, Styles: common.NewStyles(true), Keys: common.NewKeyMap(),
				Theme: "dark", DocStyle: "dark", Progress: common.OpenProgress(nil), Docs: &common.Docs{}}
			a := &attendeeApp{root: ui.NewWith(c, tc.on), c: c, seat: seat}
			a.update(presenterMsg{tc.send})
			title, at := a.root.Where()
			switch {
			case tc.there && title != tc.on.title:
				t.Errorf("sent to %+v while on it (titled %q): the app opened %q over it", tc.send, tc.on.title, title)
			case !tc.there && !common.SameScreen(at, tc.send.Place):
				t.Errorf("sent to %+v while on %+v: the app shows %q at %+v", tc.send, tc.on.at, title, at)
			}
		})
	}
}
