package ui

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// shownOrder waits until every one of choices is on screen and returns the
// order they are shown in: for each position, the index of the choice
// there. Each choice must be on screen once.
func shownOrder(t *testing.T, u *uiTest, choices []string) quiz.Shown {
	t.Helper()
	var order quiz.Shown
	u.waitUntil(t, fmt.Sprintf("the %d choices on screen", len(choices)), func() bool {
		scr := flat(u.screen())
		at := make([]int, len(choices))
		for i, c := range choices {
			if strings.Count(scr, flat(c)) != 1 {
				return false
			}
			at[i] = strings.Index(scr, flat(c))
		}
		order = make(quiz.Shown, len(choices))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return at[a] - at[b] })
		return true
	})
	return order
}

// pickShown moves the cursor from the top to the positions where the
// items are shown, ticking each when tick is set.
func pickShown(u *uiTest, shown quiz.Shown, items []int, tick bool) {
	var at []int
	for _, it := range items {
		at = append(at, shown.Position(it))
	}
	slices.Sort(at)
	pos := 0
	for _, p := range at {
		for ; pos < p; pos++ {
			u.press("j")
		}
		if tick {
			u.press("space")
		}
	}
}

// answerChoice reads the order of q's choices on screen and picks the
// right ones where they are shown: for a multiple choice question it
// ticks them, for a single one it moves to it; then it answers. It
// returns the order the choices were shown in.
func answerChoice(t *testing.T, u *uiTest, q quiz.Question) quiz.Shown {
	t.Helper()
	shown := shownOrder(t, u, q.Choices)
	pickShown(u, shown, q.Correct, q.Kind == quiz.KindMultiple)
	u.press("enter")
	return shown
}

// finish quits the program and loads the progress it saved.
func (u *uiTest) finish(t *testing.T, path string) *progress.Progress {
	t.Helper()
	u.press("q")
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	u.finished = true
	// As Run does on the way out: every queued change is written, and
	// where the learner left off.
	if err := u.m.SaveOnExit(); err != nil {
		t.Fatal(err)
	}
	p, _, err := (&progress.Store{Path: path}).Load()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The checkpoint taken from start to end twice, every answer right: each
// shows "Right.", the summary 100%, and the saved progress says so. The
// choices come shuffled: the second attempt shows every choice question's
// options in another order than the first, and picking the right option
// where it is shown is right under either order.
func TestCheckpointFromStartToEnd(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, 100, 40, path)
	set := quiz.Checkpoint()
	var orders [2]map[string]quiz.Shown
	for attempt := range 2 {
		orders[attempt] = map[string]quiz.Shown{}
		for i, q := range set.Questions {
			u.waitFor(t, "question "+strconv.Itoa(i+1)+" of 5")
			switch q.Kind {
			case quiz.KindShort:
				u.waitFor(t, "tab when done")
				u.tm.Type("Doing it twice has the same effect on the server as once: a repeat gets the first booking back. q is typed, not quit.")
				u.press("tab")
				u.waitFor(t, "The model answer:")
				for range q.Points {
					u.press("space", "j")
				}
				u.press("enter")
			default:
				orders[attempt][q.ID] = answerChoice(t, u, q)
			}
			u.waitFor(t, "Right.")
			u.press("enter")
		}
		u.waitFor(t, "Checkpoint: done", "Score 100%", fmt.Sprintf("best 100%% over %d attempt", attempt+1))
		if attempt == 0 {
			u.press("r")
		}
	}
	for id, first := range orders[0] {
		if slices.Equal(first, orders[1][id]) {
			t.Errorf("%s was shown in the order %v on both attempts", id, first)
		}
	}
	if len(orders[0]) != 4 || len(orders[1]) != 4 {
		t.Errorf("%d and %d choice questions seen, want 4 on each attempt", len(orders[0]), len(orders[1]))
	}
	p := u.finish(t, path)
	sp := p.Sets[quiz.SetCheckpoint]
	if sp == nil || sp.Best != 1 || sp.Attempts != 2 || len(sp.Answers) != 5 {
		t.Errorf("saved %+v", sp)
	}
}

// A live break-it question runs the broken design on PostgreSQL, shows its
// numbers, takes the cause and the place, then runs the correct design
// beside it.
func TestBreakItRunsBothDesignsLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetBreakIt}}, 100, 40, path)
	q := quiz.BreakIt().Questions[0]
	u.waitFor(t, "What the run showed:", "2 booking rows · 4 seats taken", "1 click, 2 tries", "What causes it?")
	// Neither the scenario's name nor its tally of keys says the cause
	// before it is picked.
	for _, away := range []string{q.Live.Scenario, "2 keys"} {
		if scr := u.screen(); strings.Contains(scr, away) {
			t.Errorf("%q on screen before the cause is picked:\n%s", away, scr)
		}
	}
	pickShown(u, shownOrder(t, u, q.Choices), q.Correct, false)
	u.press("enter")
	u.waitFor(t, "Where do you look?")
	pickShown(u, shownOrder(t, u, q.Live.Where), []int{q.Live.WhereCorrect}, false)
	u.press("enter")
	u.waitFor(t, "Right.", "Live run (new-key-per-retry, broken design)", "1 intent, 2 keys, 2 tries", "Beside it (new-key-per-retry, correct design)", "1 booking row · 2 seats taken", "every invariant holds")
	p := u.finish(t, path)
	if a := p.Sets[quiz.SetBreakIt].Answers[q.ID]; a.Score != 1 {
		t.Errorf("saved answer %+v", a)
	}
}

var stepLine = regexp.MustCompile(`(?m)^\s*(?:[▸✓✗]\s+)*(\d)\. (.+?)\s*$`)

// looks is how step i of q looks on screen before anything is filled in.
func looks(q quiz.Question, i int) string {
	st := q.Steps[i]
	lanes := st.From + " → " + st.To
	if st.From == st.To {
		lanes = st.From
	}
	return lanes + ": " + q.Frames[i].Fill(func(int) string { return "[?]" })
}

// redrawRows reads the rows of the redraw on screen, as looks gives them
// (the blank under the cursor, «?», read as [?]).
func redrawRows(t *testing.T, u *uiTest, q quiz.Question) []string {
	t.Helper()
	var rows []string
	u.waitUntil(t, "the six steps and the footer", func() bool {
		rows = rowsOn(u.screen())
		return len(rows) == len(q.Steps) && strings.Contains(u.screen(), "enter answer")
	})
	return rows
}

// rowsOn is the rows of a redraw on screen.
func rowsOn(scr string) []string {
	var rows []string
	for _, m := range stepLine.FindAllStringSubmatch(scr, -1) {
		rows = append(rows, strings.ReplaceAll(m[2], "«?»", "[?]"))
	}
	return rows
}

// blankLine is the line naming the blank under the cursor and its choices.
var blankLine = regexp.MustCompile(`«([^»]+)»: (.+) \(space puts the next\)`)

// fillBlank waits until the cursor stands on an empty blank named what,
// then presses space until it holds want, as the screen lists the
// blank's choices in the order space goes through them.
func fillBlank(t *testing.T, u *uiTest, what, want string) {
	t.Helper()
	var opts []string
	u.waitUntil(t, "the cursor on the empty blank «"+what+"»", func() bool {
		scr := u.screen()
		m := blankLine.FindStringSubmatch(flat(scr))
		if m == nil || m[1] != what || !strings.Contains(cursorLine(scr), "«?»") {
			return false
		}
		opts = strings.Split(m[2], " · ")
		return true
	})
	n := slices.Index(opts, want)
	if n < 0 {
		t.Fatalf("%q is not among the choices %q of «%s»", want, opts, what)
	}
	for range n + 1 {
		u.press("space")
	}
}

// Redraw it: the steps come shuffled and look alike in pairs (nothing
// tells the first request from the retry until the blanks are filled in).
// Put in order, and every blank filled in right but the retry's key, the
// answer is graded per position and per blank: the screen marks each,
// says what was missed, and the saved score is that grade.
func TestRedrawGradesEachPositionAndBlank(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetRedraw}}, 100, 40, path)
	q := quiz.Redraw().Questions[0]
	rows := redrawRows(t, u, q)
	for _, away := range []string{"retry", "lost", "same answer", "b1"} {
		if scr := u.screen(); strings.Contains(strings.Join(rows, "\n"), away) {
			t.Errorf("%q on screen before the blanks are filled in:\n%s", away, scr)
		}
	}
	// Sort the rows into the diagram's order with K, one step at a time.
	cursor := 0
	for p := range q.Steps {
		from := slices.IndexFunc(rows[p:], func(r string) bool { return r == looks(q, p) })
		if from < 0 {
			t.Fatalf("no step looking like %q among %q", looks(q, p), rows[p:])
		}
		from += p
		for ; cursor < from; cursor++ {
			u.press("j")
		}
		for ; cursor > from; cursor-- {
			u.press("k")
		}
		for ; cursor > p; cursor-- {
			u.press("K") // moves the step, and the cursor with it
			rows[cursor], rows[cursor-1] = rows[cursor-1], rows[cursor]
		}
	}
	for ; cursor > 0; cursor-- {
		u.press("k")
	}
	u.waitUntil(t, fmt.Sprintf("the rows in the order %q", rows), func() bool { return slices.Equal(rowsOn(u.screen()), rows) })
	// Fill in every blank, row by row; the retry's key wrong.
	const wrongAt = 3
	var order []int
	var fills [][]int
	for p, f := range q.Frames {
		if p > 0 {
			u.press("j")
		}
		u.press("h", "h", "h")
		var picks []int
		for b, bl := range f.Blanks {
			pick := bl.Right
			if p == wrongAt {
				pick = slices.Index(bl.Choices, "a new key K2")
			}
			if b > 0 {
				u.press("l")
			}
			fillBlank(t, u, bl.What, bl.Choices[pick])
			picks = append(picks, pick)
		}
		order, fills = append(order, p), append(fills, picks)
	}
	u.press("enter")
	u.waitFor(t, "The right order:", "Partly right")
	want, err := quiz.GradeOrder(q, order, fills)
	if err != nil {
		t.Fatal(err)
	}
	if want.Correct || want.Score != 15.0/16 {
		t.Fatalf("the answer given grades %+v; this test means one blank of 16 points wrong", want)
	}
	scr := u.screen()
	if got := strings.Count(scr, "✓]"); got != 9 {
		t.Errorf("%d blanks marked right, want 9:\n%s", got, scr)
	}
	if !strings.Contains(scr, "[a new key K2 ✗]") || !strings.Contains(flat(scr), "Missed: 4. key: the key K (not a new key K2)") {
		t.Errorf("the wrong key is not marked and said:\n%s", scr)
	}
	p := u.finish(t, path)
	if a := p.Sets[quiz.SetRedraw].Answers[q.ID]; a.Score != want.Score {
		t.Errorf("saved %v, want %v", a.Score, want.Score)
	}
}

// The drill: a spoken answer against the visible countdown, its key points
// ticked, then every flashcard rated; the schedule is saved and nothing is
// due any more.
func TestDrillCountdownAndFlashcards(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageDrill}}, 100, 40, path)
	d := quiz.Interview()
	u.waitFor(t, "Countdown: 30 s")
	u.press("-", "-")
	u.waitFor(t, "Countdown: 20 s")
	u.press("enter")
	u.waitFor(t, "⏱ 0:20")
	u.waitFor(t, "⏱ 0:18") // it counts down
	u.tm.Type("a UUID per intent, same key on retries, unique per user")
	u.press("tab")
	u.waitFor(t, "The model answer:")
	u.press("space", "enter")
	u.waitFor(t, "of the key points.")
	u.press("enter")
	u.waitFor(t, "Question 2 of 2")
	u.press("tab", "enter")
	u.waitFor(t, "0% of the key points.")
	u.press("enter")
	for i := range d.Cards {
		u.waitFor(t, "Card "+strconv.Itoa(i+1)+" of "+strconv.Itoa(len(d.Cards)))
		u.press("enter")
		u.waitFor(t, "1 again · 2 hard · 3 good · 4 easy")
		u.press("3")
	}
	n := strconv.Itoa(len(d.Cards))
	u.waitFor(t, "Done for now.", n+" cards reviewed: 0 again, 0 hard, "+n+" good, 0 easy")
	p := u.finish(t, path)
	if got := quiz.DueToday(p, d.Cards, time.Now()); got != 0 {
		t.Errorf("%d cards still due", got)
	}
	if len(p.Drill) != len(d.Cards) || p.DrillSeconds != 20 {
		t.Errorf("saved drill %+v, seconds %d", p.Drill, p.DrillSeconds)
	}
}

// learn starts on the home screen, whose first entry offers where the
// learner left off: a quiz left at question 3 is "Resume: Checkpoint,
// question 3 of 5", Enter opens it there, and Esc goes home, where the set
// shows as unfinished and the entry stays.
func TestResumeWhereTheLearnerLeftOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}}, 80, 24, path)
	u.waitFor(t, "question 3 of 5")
	p := u.finish(t, path)
	if p.Resume.Page != progress.PageQuiz || p.Resume.Name != quiz.SetCheckpoint || p.Resume.Step != 2 {
		t.Fatalf("saved resume %+v", p.Resume)
	}
	again := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	again.waitFor(t, "▸ Resume: Checkpoint, question 3 of 5", "Lesson: Idempotency", "where you left off")
	again.press("enter")
	again.waitFor(t, "Checkpoint · ", "question 3 of 5")
	again.press("esc")
	again.waitFor(t, "Lesson: Idempotency", "Checkpoint (5 questions)", "Resume: Checkpoint, question 3 of 5")
}

// With nothing to resume the home screen has no resume entry; a finished
// quiz leaves nothing to resume.
func TestNothingToResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	u.waitFor(t, "▸ Lesson: Idempotency")
	if strings.Contains(u.screen(), "Resume") {
		t.Errorf("a resume entry with nothing to resume:\n%s", u.screen())
	}
	u.finish(t, path)
	if _, err := (&progress.Store{Path: path}).Update(func(p *progress.Progress) error {
		p.Resume = progress.Place{Page: progress.PageReader, Name: "no-such-page"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	again := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	again.waitFor(t, "▸ Lesson: Idempotency") // a page since renamed is not offered
}

// learn --present starts on the home screen (with its resume entry), not
// on the last screen; the page it names opens as before.
func TestPresentStartsAtHome(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency", Section: "Picture it"}}, 80, 24, path)
	u.waitFor(t, "Idempotency · Picture it")
	u.finish(t, path)
	present := func(c *common.Common) { c.Present, c.PresentSince = true, time.Now() }
	home := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path, present)
	home.waitFor(t, "▸ Resume: Idempotency › Picture it", "Lesson: Idempotency")
	named := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24, path, present)
	named.waitFor(t, "step 1 ")
}

// m marks a page as read; the home screen shows it.
func TestMarkAsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	u.waitFor(t, "not read yet")
	u.press("enter")
	u.waitFor(t, "In 1 minute")
	u.press("m")
	u.waitFor(t, "✓ read")
	u.press("esc")
	u.waitFor(t, "Lesson: Idempotency")
	u.waitFor(t, "✓ read")
	p := u.finish(t, path)
	if !p.IsRead("idempotency") {
		t.Error("not saved as read")
	}
}

// Enter on a question of several answers with nothing ticked grades
// nothing and says why, in words; the next key clears it, and ticking one
// and pressing enter grades the answer. Before, enter did nothing, silently.
func TestEnterWithNothingTickedSaysSo(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 1}}, 80, 24)
	q := quiz.Checkpoint().Questions[1]
	if q.Kind != quiz.KindMultiple {
		t.Fatalf("checkpoint question 2 is no longer one of several answers: %v", q.Kind)
	}
	const hint = "tick at least one with space, then enter"
	u.waitFor(t, "question 2 of 5", "[ ] ")
	shown := shownOrder(t, u, q.Choices)
	u.press("enter")
	u.waitUntil(t, "the hint", func() bool { return strings.Contains(flat(u.screen()), hint) })
	u.press("j")
	u.waitUntil(t, "the hint to go", func() bool { return !strings.Contains(flat(u.screen()), hint) })
	u.press("k") // back to the top, then tick one right option where it is shown
	pickShown(u, shown, q.Correct[:1], true)
	u.press("enter")
	u.waitFor(t, "Partly right")
}

// The short answer's ticks are checked against the text: after tab the
// learner's text and the whole model answer are in view at 80x24 above
// the points, each point the text does not mention is marked, and the
// rule is on screen. "It retries" with every point ticked scores half;
// the saved score says so.
func TestShortAnswerTicksAreCheckedAgainstTheText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, 80, 24, path)
	q := quiz.Checkpoint().Questions[0]
	if q.Kind != quiz.KindShort {
		t.Fatalf("checkpoint/1 is %s, not the short answer", q.Kind)
	}
	u.waitFor(t, "tab when done")
	u.tm.Type("It retries")
	u.press("tab")
	u.waitUntil(t, "the text and the model answer in view", func() bool {
		scr := flat(u.screen())
		return strings.Contains(scr, "You wrote: It retries") && strings.Contains(scr, flat(q.Model)) &&
			strings.Contains(scr, "counts half when ticked") && strings.Contains(scr, "▸ [ ] "+q.Points[0])
	})
	if n := strings.Count(flat(u.screen()), "· not in your text"); n != len(q.Points) {
		t.Errorf("%d marks, want every one of the %d points marked:\n%s", n, len(q.Points), u.screen())
	}
	for range q.Points {
		u.press("space", "j")
	}
	u.press("enter")
	u.waitFor(t, "Partly right: 50%")
	u.waitUntil(t, "the half credit said", func() bool { return strings.Contains(flat(u.screen()), "Ticked but not in your text, so counted half") })
	p := u.finish(t, path)
	if a := p.Sets[quiz.SetCheckpoint].Answers[q.ID]; a.Score != 0.5 {
		t.Errorf("saved %v, want 0.5", a.Score)
	}
}

// The drill: a typed answer is checked as the short answer is (its text
// and the model answer in view at 80x24, the points it does not mention
// marked, half for those ticked); an answer said aloud, nothing typed, is
// graded by the ticks alone, and the screen says so.
func TestDrillChecksATypedAnswerAndTrustsASpokenOne(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageDrill}}, 80, 24)
	d := quiz.Interview()
	u.waitFor(t, "Countdown: 30 s")
	u.press("enter")
	u.waitFor(t, "⏱ 0:30", "tab when done")
	u.tm.Type("It retries")
	u.press("tab")
	u.waitUntil(t, "the text and the model answer in view", func() bool {
		scr := flat(u.screen())
		return strings.Contains(scr, "You wrote: It retries") && strings.Contains(scr, flat(d.Prompts[0].Model)) && strings.Contains(scr, "▸ [ ] ")
	})
	for range d.Prompts[0].Points {
		u.press("space", "j")
	}
	u.press("enter")
	u.waitFor(t, "50% of the key points.")
	u.waitUntil(t, "the half credit said", func() bool {
		return strings.Contains(flat(u.screen()), fmt.Sprintf("%d points ticked but not in your text, so counted half.", len(d.Prompts[0].Points)))
	})
	u.press("enter")
	u.waitFor(t, "Question 2 of 2", "tab when done")
	u.press("tab") // said aloud: nothing typed
	u.waitUntil(t, "the spoken answer's rule", func() bool {
		return strings.Contains(flat(u.screen()), "Nothing typed, so nothing to check: you said it aloud, and your ticks grade it as they are.")
	})
	if scr := u.screen(); strings.Contains(scr, "not in your text") || strings.Contains(scr, "You wrote") {
		t.Errorf("a spoken answer is checked against a text:\n%s", scr)
	}
	for range d.Prompts[1].Points {
		u.press("space", "j")
	}
	u.press("enter")
	u.waitFor(t, "100% of the key points.")
}

// slotOrder waits until the screen asks for prediction slot (0-based) of
// q and returns the order its choices are shown in.
func slotOrder(t *testing.T, u *uiTest, q quiz.Question, slot int) quiz.Shown {
	t.Helper()
	sl := q.Predict.Slots[slot]
	head := fmt.Sprintf("Predict %d of %d: %s", slot+1, len(q.Predict.Slots), sl.What)
	var order quiz.Shown
	u.waitUntil(t, head+" and its choices", func() bool {
		lines := strings.Split(u.screen(), "\n")
		at := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == head })
		if at < 0 || at+len(sl.Choices) >= len(lines) {
			return false
		}
		order = nil
		for _, l := range lines[at+1 : at+1+len(sl.Choices)] {
			i := slices.Index(sl.Choices, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "▸")))
			if i < 0 {
				return false
			}
			order = append(order, i)
		}
		return true
	})
	return order
}

// Predict, then run, taken twice at 80x24: each prediction's choices come
// in a new order on the second attempt; the scenario runs only once every
// slot is predicted; a wrong prediction (two 200s for one key sent for two
// events) is marked wrong beside the run's own answers, and the saved
// score is the grade from the run.
func TestPredictThenRun(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetPredict}}, 80, 24, path)
	set := quiz.PredictSet()
	var orders [2]map[string]quiz.Shown
	for attempt := range 2 {
		orders[attempt] = map[string]quiz.Shown{}
		for i, q := range set.Questions {
			u.waitFor(t, fmt.Sprintf("question %d of %d", i+1, len(set.Questions)))
			wrong := attempt == 0 && q.ID == "predict/key-reuse-two-events"
			for s, sl := range q.Predict.Slots {
				shown := slotOrder(t, u, q, s)
				orders[attempt][fmt.Sprintf("%s %d", q.ID, s)] = shown
				pick := sl.Right
				if wrong && sl.Measure == quiz.MeasureAnswers {
					pick = slices.Index(sl.Values, "2×200")
				}
				pickShown(u, shown, []int{pick}, false)
				if s < len(q.Predict.Slots)-1 && strings.Contains(u.screen(), "the run:") {
					t.Fatalf("the run shows before every slot is predicted:\n%s", u.screen())
				}
				u.press("enter")
			}
			u.waitFor(t, "the run:")
			if wrong {
				u.waitFor(t, "Partly right: 75%", "✗ the answers that reach the browser")
				if scr := flat(u.screen()); !strings.Contains(scr, "you said 200, 200 · the run: 200, 409") && !strings.Contains(scr, "you said 200, 200 · the run: 409, 200") {
					t.Errorf("the wrong prediction is not shown beside the run's answers:\n%s", u.screen())
				}
			} else {
				u.waitFor(t, "Right.")
			}
			u.press("enter")
		}
		u.waitFor(t, "Predict, then run: done")
		if attempt == 0 {
			u.waitFor(t, "Score 95%") // four right, and three slots of four
			u.press("r")
		}
	}
	for k, first := range orders[0] {
		if slices.Equal(first, orders[1][k]) {
			t.Errorf("%s: the choices came in the order %v on both attempts", k, first)
		}
	}
	p := u.finish(t, path)
	sp := p.Sets[quiz.SetPredict]
	if sp == nil || sp.Attempts != 2 || sp.Best != 1 || sp.LastScore != 1 {
		t.Errorf("saved %+v", sp)
	}
}
