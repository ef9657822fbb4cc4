package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/pages/play"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// uiTest runs the app in teatest and replays its output through a virtual
// terminal, so assertions read the screen as a user sees it.
type uiTest struct {
	tm  *teatest.TestModel
	m   *Model
	scr *uitest.Screen
	// finished is set by a test that saw the program end.
	finished bool
}

func startUI(t *testing.T, first common.Open, w, h int) *uiTest {
	t.Helper()
	return startUIWith(t, first, w, h, filepath.Join(t.TempDir(), "progress.json"))
}

// startUIWith runs the app with its progress in the file at path;
// each of opts changes the Common before the app is built (as Run's flags
// do).
func startUIWith(t *testing.T, first common.Open, w, h int, path string, opts ...func(*common.Common)) *uiTest {
	t.Helper()
	return startUIWrapped(t, first, w, h, path, nil, opts...)
}

// startUIWrapped is startUIWith running wrap(the app) instead of the app
// (a test that hears what the app tells, as a workshop's session does);
// a nil wrap runs the app itself.
func startUIWrapped(t *testing.T, first common.Open, w, h int, path string, wrap func(*Model) tea.Model, opts ...func(*common.Common)) *uiTest {
	t.Helper()
	db := live.Existing(testDB)
	runs := live.NewRuns(t.Context(), db)
	c := &common.Common{Ctx: t.Context(), Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Theme: "dark", DocStyle: "dark",
		DB: db, Runs: runs, Progress: common.OpenProgress(&progress.Store{Path: path, Known: quiz.Known}), Docs: &common.Docs{}}
	for _, o := range opts {
		o(c)
	}
	m := New(c, first)
	var run tea.Model = m
	if wrap != nil {
		run = wrap(m)
	}
	tm := teatest.NewTestModel(t, run, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	u := &uiTest{tm: tm, m: m, scr: uitest.NewScreen(w, h)}
	stop := uitest.Follow(t, tm, u.scr)
	t.Cleanup(func() {
		if !u.finished {
			_ = tm.Quit()
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		}
		m.Close()
		runs.Close()
		// As Run does on the way out: every queued change is written, and
		// where the learner left off.
		if err := m.SaveOnExit(); err != nil {
			t.Errorf("progress: %v", err)
		}
		// The test's context is cancelled before its cleanups run: the
		// copy of the output ends.
		stop()
	})
	return u
}

// quit presses q and waits for the program to end.
func (u *uiTest) quit(t *testing.T) {
	t.Helper()
	u.press("q")
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	u.finished = true
}

// end presses Ctrl-C, which ends the program whatever has the keys (a text
// box takes q), and waits for it to end.
func (u *uiTest) end(t *testing.T) {
	t.Helper()
	u.tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	u.finished = true
}

// waitUntil waits until ok holds, checking it again each time the screen
// changes (and, for what is not on the screen, such as the schemas a run
// holds, every tenth of a second); after 20 s without it, it fails saying
// what it waited for.
func (u *uiTest) waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	u.wait(t, ok, func() string { return what + " never happened" })
}

// wait is waitUntil failing with failure's words.
func (u *uiTest) wait(t *testing.T, ok func() bool, failure func() string) {
	t.Helper()
	u.scr.WaitOr(t, func(string) bool { return ok() }, failure)
}

// screen is the virtual terminal's text, lines joined by newlines.
func (u *uiTest) screen() string { return u.scr.String() }

// waitFor waits until every want is on screen; it fails with the screen.
func (u *uiTest) waitFor(t *testing.T, want ...string) {
	t.Helper()
	missing := ""
	u.wait(t, func() bool {
		s := u.screen()
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%q never appeared", missing) })
}

// choose moves the home screen's cursor down, one entry at a time, to the
// entry whose title begins with title (on the line of the cursor); it
// fails when the cursor has gone round the menu without finding it.
func (u *uiTest) choose(t *testing.T, title string) {
	t.Helper()
	first := cursorLine(u.screen())
	for i := 0; ; i++ {
		line := cursorLine(u.screen())
		if strings.Contains(line, "▸ "+title) {
			return
		}
		if i > 0 && line == first {
			t.Fatalf("no entry %q on the home screen:\n%s", title, u.screen())
		}
		u.press("down")
		u.waitUntil(t, "the cursor to move from "+line, func() bool { return cursorLine(u.screen()) != line })
	}
}

func (u *uiTest) press(keys ...string) {
	for _, k := range keys {
		u.tm.Send(keyPress(k))
	}
}

// keyPress builds the key press message Bubble Tea sends for k.
func keyPress(k string) tea.KeyPressMsg { return uitest.Key(k) }

func TestHomeOpensTheLessonAt80x24(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24)
	u.waitFor(t, "Lesson: Idempotency", "Play: the lost answer", "PostgreSQL ready")
	u.press("enter")
	u.waitFor(t, "Idempotency", "In 1 minute", "idempotent")
	u.press("tab")
	u.waitFor(t, "Picture it", "Browser")
	u.press("esc")
	// The home screen first: a press that comes while the screen still
	// shows the lesson moves a cursor the screen shows a frame later, and
	// choose would stop one entry past the card.
	u.waitFor(t, "Interview card: ", "Play: the lost answer")
	u.choose(t, "Interview card")
	u.press("enter")
	u.waitFor(t, "Say it in 30 seconds")
	u.press("?")
	u.waitFor(t, "Keys", "next section")
}

func TestPlayLostAnswerReachesTheFinalStateAt80x24(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24)
	u.waitFor(t, "step 1 ·", "simulated clock t=0.0s", "book 2, key", "seats_left 10/10", "bookings: none")
	for step := 2; step <= 12; step++ {
		u.press("n")
		u.waitFor(t, "step "+strconv.Itoa(step)+" ·")
	}
	u.press("n")
	// The run's summary: the story in the lesson's shape, the numbers, the
	// verdict.
	u.waitFor(t, "summary of 12 steps", "✓ one booking, 2 seats, and the retry got the same booking back",
		"200 b1 (replay)", "1 lost", "2 seats taken", "200 b1 (lost)", "key has b1, write nothing")
	u.press("p")
	u.waitFor(t, "step 12/12", "seats_left 8/10", "find key → b1", "write nothing, COMMIT", "replayed for a", "above")
	// The first steps scrolled away at 80x24: the diagram says so, and
	// scrolls back to them.
	u.press("g")
	u.waitFor(t, "BEGIN; lock event 1", "find key → none", "✕", "lost", "below")
	rep := u.m.top().page.(*play.Model).Report()
	if rep == nil || rep.Lost != 1 || rep.BookingRows != 1 || rep.SeatsTaken != 2 || len(rep.Answers) != 1 || !rep.Answers[0].Replayed {
		t.Errorf("report = %+v", rep)
	}
}

func TestTooSmallWindowAsksForMore(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 50, 15)
	u.waitFor(t, "make the window larger")
}

// The picker lists every scenario; v picks the broken variant, which the
// play screen runs live to its wrong answer.
func TestPickerPlaysABrokenVariant(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 100, 30)
	u.waitFor(t, "Scenarios: all 19")
	u.choose(t, "Scenarios: all 19")
	u.press("enter")
	u.waitFor(t, "The lost answer", "Two users, same key", "each runs live on PostgreSQL")
	u.press("j", "j", "j", "v")
	u.waitFor(t, "the key is looked up after the seat check")
	u.press("enter")
	u.waitFor(t, "Play: The last seats · broken", "step 1 ·")
	u.press("+", "+", "space") // 4x
	u.waitFor(t, "✗ told “Not enough seats left” for the seats the user already has", "409 Not enough seats left", "1 lost", "2 seats taken")
	u.press("esc")
	u.waitFor(t, "each runs live on PostgreSQL")
}

func TestQuitFromTheHelpOverlay(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24)
	u.waitFor(t, "Lesson: Idempotency")
	u.press("?")
	u.waitFor(t, "q quits")
	u.press("q")
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	u.finished = true
}

// Tab reaches every section, the last ones too, although the page cannot
// scroll their headings to the top.
func TestTabReachesTheLastSection(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute")
	for range 12 {
		u.press("tab")
	}
	u.waitFor(t, "Idempotency · Try this")
	u.press("shift+tab")
	u.waitFor(t, "Idempotency · Redraw it")
}

// A burst of n presses steps as many times, even though each step arrives
// after the press that asked for it.
func TestBurstOfStepsIsNotLost(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24)
	u.waitFor(t, "step 1 ·")
	for range 12 {
		u.press("n")
	}
	u.waitFor(t, "summary of 12 steps", "200 b1 (replay)")
}

// Stepping back shows each kept frame exactly as it was drawn going
// forward: nothing is run again.
func TestSteppingBackGivesIdenticalFrames(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, size[0], size[1])
		u.waitFor(t, "step 1 ·")
		forward := map[int]string{}
		for step := 1; step <= 12; step++ {
			u.waitStep(t, fmt.Sprintf("step %d ·", step))
			forward[step] = u.screen()
			u.press("n")
		}
		u.waitFor(t, "summary of 12 steps")
		u.press("p")
		u.waitFor(t, "step 12/12 ")
		for step := 11; step >= 1; step-- {
			u.press("p")
			u.waitStep(t, fmt.Sprintf("step %d/12 ", step))
			if got, want := frameOf(u.screen()), frameOf(forward[step]); got != want {
				t.Fatalf("%dx%d step %d differs going back:\n%s\nforward it was:\n%s", size[0], size[1], step, got, want)
			}
		}
	}
}

// frameOf is a play screen without its header and help lines: what was
// drawn for the step.
func frameOf(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) < 3 {
		return screen
	}
	return strings.Join(lines[1:len(lines)-1], "\n")
}

// waitStep waits until the play screen shows step (its header's words)
// with the rows read after it: the step's frame is whole once the rows
// pane no longer says "reading…".
func (u *uiTest) waitStep(t *testing.T, step string) {
	t.Helper()
	u.wait(t, func() bool {
		s := u.screen()
		return strings.Contains(s, step) && !strings.Contains(s, "reading…")
	}, func() string { return fmt.Sprintf("%q with its rows read never appeared", step) })
}

func TestRaceFillsTheGridAndTalliesFromPostgreSQL(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 100, 30)
	u.waitFor(t, "Race: N copies", "PostgreSQL ready")
	u.choose(t, "Race: N copies")
	u.press("enter")
	u.waitFor(t, "Copies: 10")
	u.press("up", "up", "+", "+") // 32
	u.waitFor(t, "Copies: 32")
	u.press("enter")
	u.waitFor(t, "32 answers (32 of them 200)", "1 distinct booking id (b1)", "1 row in PostgreSQL", "2 seats taken", "✓ 32 copies, one booking")
	if got := strings.Count(u.screen(), "○"); got < 31 {
		t.Errorf("%d replay marks, want 31 (+1 in the legend):\n%s", got, u.screen())
	}
	u.press("v", "enter")
	u.waitFor(t, "32 distinct booking ids (b1 to b32)", "32 rows in PostgreSQL", "64 seats taken", "charged 32 times")
}

func TestPresenterModeHidesTheChrome(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24)
	u.waitFor(t, "step 1 ·")
	u.press("P")
	u.waitFor(t, "00:0", "step 1 ")
	if s := u.screen(); strings.Contains(s, "esc back") || strings.Contains(s, "Rows (committed)") {
		t.Errorf("presenter mode shows chrome:\n%s", s)
	}
	u.tm.Send(tea.KeyPressMsg{Code: tea.KeyPgDown})
	u.waitFor(t, "step 2 ", "BEGIN; lock event 1")
	u.tm.Send(tea.KeyPressMsg{Code: tea.KeyPgUp})
	u.waitFor(t, "step 1 of 2 so far")
	u.press("P")
	u.waitFor(t, "space play/pause", "Rows (committed)")
}

// Every screen draws inside the window at the smallest size, 80x24 and
// 120x40: the page's own view (not the frame the root cuts to the window)
// is no taller than the room above the footer and no line is wider than the
// window, and the header is one line: its right-hand end (head) is on the
// page's first line. Seen before: the race at 100 copies and the lab's
// scorecard ran past the bottom, the reader's and the play screen's titles
// wrapped the header onto two lines.
func TestEveryScreenFitsTheWindow(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	screens := []struct {
		open  common.Open
		want  string
		press []string
		then  string
		// finish plays a run to its diagnosis, after press.
		finish bool
		// press2 are pressed once then is on screen, then2 waited for.
		press2 []string
		then2  string
		head   string
	}{
		{open: common.Open{Place: progress.Place{Page: progress.PageHome}}, want: "Lesson: Idempotency", head: "learn"},
		{open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, want: "In 1 minute", head: "%"},
		{open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: "retry-across-instances"}}, want: "Say it in 30 seconds", head: "%"},
		{open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "other-instance", Variant: string(sim.Broken)}}, want: "API-2", head: "step "},
		{open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "redis-ttl", Variant: string(sim.Broken)}}, want: "Redis", head: "step "},
		{open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "redis-ttl", Variant: string(sim.Broken)}}, want: "step 1 ·",
			finish: true, head: "diagnosis"},
		{open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lookup-before-lock", Variant: string(sim.Broken)}}, want: "step 1 ·",
			finish: true, press2: []string{"p"}, then2: "summary of", head: "summary of"},
		{open: common.Open{Place: progress.Place{Page: progress.PagePicker}}, want: "Scenarios", head: "Scenarios"},
		{open: common.Open{Place: progress.Place{Page: progress.PageRace}}, want: "Copies: 10", head: "Race"},
		{open: common.Open{Place: progress.Place{Page: progress.PageRace}}, want: "Copies: 10",
			press: append(slices.Repeat([]string{"up"}, 9), "v", "enter"), then: "✗", head: "Race"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, want: "question 1 of 5", head: "question 1 of 5"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetBreakIt}}, want: "What causes it?", head: "question 1 of"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetRedraw}}, want: "6. ", head: "question 1 of"},
		{open: common.Open{Place: progress.Place{Page: progress.PageDrill}}, want: "Countdown: 30 s", head: "Interview drill"},
		{open: common.Open{Place: progress.Place{Page: progress.PageDrill}}, want: "Countdown: 30 s", press: []string{"enter", "tab"}, then: "The model answer:", head: "Interview drill"},
		{open: common.Open{Place: progress.Place{Page: progress.PageLab}}, want: "safe against 19 of 19", head: "Design lab"},
		{open: common.Open{Place: progress.Place{Page: progress.PageLab}}, want: "safe against 19 of 19", press: []string{"j", "j", "j", "right", "right", "enter"},
			then: "safe against 17 of 19", head: "Design lab"},
	}
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		for i, sc := range screens {
			t.Run(fmt.Sprintf("%dx%d/%d/%v/%s", size[0], size[1], i, sc.open.Page, sc.open.Name), func(t *testing.T) {
				t.Parallel()
				u := startUI(t, sc.open, size[0], size[1])
				u.waitFor(t, sc.want)
				if len(sc.press) > 0 {
					u.press(sc.press...)
					u.waitFor(t, sc.then)
				}
				if sc.finish {
					u.toDiagnosis(t)
				}
				if len(sc.press2) > 0 {
					u.press(sc.press2...)
					u.waitFor(t, sc.then2)
				}
				// The frame as the app makes it, not as the terminal shows
				// it: a terminal wraps a line that is too wide. The model is
				// the test's to read once the program has ended.
				u.end(t)
				page := u.m.top().page.View()
				lines := strings.Split(page, "\n")
				if room := u.m.c.Body(); len(lines) > room {
					t.Errorf("the page is %d lines, the room %d:\n%s", len(lines), room, page)
				}
				for i, l := range lines {
					if w := ansi.StringWidth(l); w > size[0] {
						t.Errorf("line %d is %d wide: %q", i, w, ansi.Strip(l))
					}
				}
				if !strings.Contains(ansi.Strip(lines[0]), sc.head) {
					t.Errorf("the header's end %q is not on its first line:\n%s", sc.head, page)
				}
			})
		}
	}
}

func TestReaderContentsAndSearch(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute")
	u.press("t")
	u.waitFor(t, "Contents", "Follow-ups", "Try this")
	for range 5 {
		u.press("j")
	}
	u.press("enter")
	u.waitFor(t, "Idempotency · Follow-ups")
	u.press("/")
	u.waitFor(t, "/")
	u.tm.Type("redis q") // q is typed, not quit
	u.press("enter")
	u.waitFor(t, "/redis q: not on this page")
	u.press("/")
	u.tm.Send(tea.KeyPressMsg{Code: tea.KeyUp}) // the last search, to edit
	for range 2 {
		u.tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	u.press("enter")
	u.waitFor(t, "/redis: match 1 of ")
	u.waitUntil(t, "the match highlighted", func() bool {
		r := u.reversed()
		return len(r) == 1 && strings.EqualFold(r[0], "redis")
	})
	u.press("n")
	u.waitFor(t, "/redis: match 2 of ")
	u.press("N")
	u.waitFor(t, "/redis: match 1 of ")
	u.press("esc")
	u.waitGone(t, "match 1 of")
	u.press("esc")
	u.waitFor(t, "Lesson: Idempotency") // the second esc goes back
}

// waitGone waits until text is no longer on screen.
func (u *uiTest) waitGone(t *testing.T, text string) {
	t.Helper()
	u.waitUntil(t, fmt.Sprintf("%q gone from the screen", text), func() bool { return !strings.Contains(u.screen(), text) })
}

// Below the minimum size nothing the learner does has an effect they
// cannot see: keys (? and Enter opened screens that appeared after the
// resize), pastes and the mouse wheel all do nothing; q still quits.
func TestTooSmallWindowTakesNoInput(t *testing.T) {
	t.Run("home", func(t *testing.T) {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 50, 15)
		u.waitFor(t, "make the window larger")
		u.press("?", "down", "j", "P", "enter")
		u.tm.Send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
		u.tm.Send(tea.MouseClickMsg{Button: tea.MouseLeft, X: 3, Y: 4})
		u.resize(80, 24)
		u.waitFor(t, "▸ Lesson: Idempotency", "enter open")
		if s := u.screen(); strings.Contains(s, "Keys") || strings.Contains(s, "00:0") {
			t.Errorf("a key pressed below the minimum size acted:\n%s", s)
		}
	})
	t.Run("reader", func(t *testing.T) {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 50, 15)
		u.waitFor(t, "make the window larger")
		for range 5 {
			u.tm.Send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
		}
		u.press("/")
		u.tm.Send(tea.PasteMsg{Content: "redis"})
		u.resize(80, 24)
		u.waitFor(t, "Idempotency · In 1 minute", "0%", "/ search")
		if s := u.screen(); strings.Contains(s, "redis:") || strings.Contains(s, "search this page") {
			t.Errorf("the search opened below the minimum size:\n%s", s)
		}
	})
	t.Run("answer box", func(t *testing.T) {
		short := 0
		for i, q := range quiz.Checkpoint().Questions {
			if q.Kind == quiz.KindShort {
				short = i
			}
		}
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: short}}, 50, 15)
		u.waitFor(t, "make the window larger")
		u.tm.Send(tea.PasteMsg{Content: "pasted unseen"})
		u.press("x")
		u.resize(80, 24)
		u.waitFor(t, "your answer, in a sentence or two")
		if s := u.screen(); strings.Contains(s, "pasted unseen") {
			t.Errorf("the paste landed below the minimum size:\n%s", s)
		}
	})
}

// In presenter mode at 80x24 every box keeps its borders, however long the
// caption: the caption box takes the lines its text needs.
func TestPresenterModeKeepsEveryBorder(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "other-instance", Variant: string(sim.Broken)}}, 80, 24)
	u.waitFor(t, "step 1 ·")
	u.press("P")
	for range 6 {
		u.press("n")
	}
	u.waitFor(t, "step 7 ")
	lines := strings.Split(strings.TrimRight(u.screen(), "\n"), "\n")
	var top, bottom int
	for _, l := range lines {
		top += strings.Count(l, "╔")
		bottom += strings.Count(l, "╚")
	}
	if top != 1 || bottom != 1 || !strings.Contains(lines[len(lines)-1], "╚") {
		t.Errorf("the caption box lost a border (╔ %d, ╚ %d):\n%s", top, bottom, u.screen())
	}
}

// When several requests are in flight, each arrow and caption names its
// own: the copy of how many, or the event it books.
func TestRequestsInFlightAreNamed(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "key-reuse-two-events"}}, 120, 40)
	u.waitFor(t, "step 1 ·")
	u.press("n")
	u.waitFor(t, "event 1: ada: book 2", "event 2: ada: book 2")
	c := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lookup-before-lock"}}, 120, 40)
	c.waitFor(t, "step 1 ·")
	c.waitFor(t, " of 2: POST /bookings 2 seats", "▸ copy ")
}

// P works where a page has a presenter mode (play, race) and shows it is on
// with a clock; elsewhere it does nothing and is not offered.
func TestPresenterKeyOnlyWhereItWorks(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24)
	u.waitFor(t, "Lesson: Idempotency", "? help")
	u.press("P")
	u.press("?")
	u.waitFor(t, "Keys")
	if strings.Contains(u.screen(), "presenter") {
		t.Errorf("the home screen offers presenter mode:\n%s", u.screen())
	}
	u.press("esc")
	u.waitFor(t, "? help") // the footer is still there: P did nothing
	r := startUI(t, common.Open{Place: progress.Place{Page: progress.PageRace}}, 100, 30)
	r.waitFor(t, "Copies: 10", "enter fire")
	r.press("P")
	r.waitFor(t, "00:0")
	r.waitGone(t, "? help")
}

// The play screen's last frame keeps its header and its keys on screen at
// the smallest size and at 80x24, starts at the verdict, and when the
// rows pane does not fit below it, says so and scrolls to it: the pane then
// shows its column names and every booking. Seen before: at 80x24 the pane
// of redis-ttl broken showed the last 2 of 4 rows without the column names
// or a hint, and at 60x20 "p: back to the story" was cut off.
func TestDiagnosisKeepsItsRowsAndItsKeys(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	for _, size := range [][2]int{{60, 20}, {80, 24}, {100, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "redis-ttl", Variant: string(sim.Broken)}}, size[0], size[1])
			u.waitFor(t, "step 1 ·")
			u.toDiagnosis(t)
			u.waitFor(t, "✗ ")
			if strings.Contains(u.screen(), " below (") {
				u.press("G")
				u.waitFor(t, "id user event qty key", "above")
			}
			u.end(t)
			pg := u.m.top().page.(*play.Model)
			view := ansi.Strip(pg.View())
			lines := strings.Split(view, "\n")
			if len(lines) > u.m.c.Body() {
				t.Errorf("%d lines for %d:\n%s", len(lines), u.m.c.Body(), view)
			}
			if !strings.Contains(lines[0], "diagnosis") {
				t.Errorf("the header is not the first line:\n%s", view)
			}
			if !strings.Contains(lines[len(lines)-1]+lines[max(0, len(lines)-2)], "p: back to the story") {
				t.Errorf("the keys are not at the bottom:\n%s", view)
			}
			if !strings.Contains(view, "id user event qty key") {
				t.Errorf("the rows pane has no column names:\n%s", view)
			}
			for i := 1; i <= pg.Report().BookingRows; i++ {
				if !strings.Contains(view, fmt.Sprintf("│ b%d ", i)) {
					t.Errorf("booking b%d of %d is not in the pane:\n%s", i, pg.Report().BookingRows, view)
				}
			}
		})
	}
}

// toDiagnosis plays the broken run on screen to its last frame, the
// diagnosis: a burst of steps (presses that come before their step are
// kept for it) reaches the summary, or past it when the run is short; one
// more step from the summary.
func (u *uiTest) toDiagnosis(t *testing.T) {
	t.Helper()
	u.press(slices.Repeat([]string{"n"}, 100)...)
	atSummary := false
	u.waitUntil(t, "the summary or the diagnosis", func() bool {
		s := u.screen()
		atSummary = strings.Contains(s, "summary of")
		return atSummary || strings.Contains(s, "p: back to the story")
	})
	if atSummary {
		u.press("n")
	}
	u.waitFor(t, "p: back to the story")
}

// A page that cannot be built (a scenario renamed since the progress file
// was written, a quiz set that is gone) is said, with what to do, and the
// page below stays on screen.
func TestAPageThatCannotOpenIsSaid(t *testing.T) {
	for _, o := range []common.Open{
		{Place: progress.Place{Page: progress.PagePlay, Name: "renamed-scenario"}},
		{Place: progress.Place{Page: progress.PageQuiz, Name: "gone-set"}},
		{Place: progress.Place{Page: progress.PageReader, Name: "no-page"}},
	} {
		t.Run(o.Name, func(t *testing.T) {
			u := startUI(t, o, 200, 30)
			u.waitFor(t, "Not opened (pick it from the home page)", o.Name, "Lesson: Idempotency")
		})
	}
}
