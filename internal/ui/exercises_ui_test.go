package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// The exercises' screen as a learner uses it at 80x24: it writes the
// module where there is none (i), checks it at once, checks again on
// every save (a reference solution saved passes the first exercise; a
// file that does not compile shows the compiler's words, file and line),
// gives a hint on h, and plays a row live on the learner's code, each of
// their statements held before PostgreSQL gets it, with the rows
// committed meanwhile: the play opens held, and its first line says
// whether it plays or is held, as the footer's space does.
func TestTheExercisesScreenChecksOnEverySave(t *testing.T) {
	t.Parallel() // an app of its own, its own module, schemas and progress file
	dir := filepath.Join(t.TempDir(), "learn-exercises")
	progressPath := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageExercises}}, 80, 24, progressPath,
		func(c *common.Common) { c.ExercisesDir = dir })
	u.waitFor(t, "There are no exercises in", "Press i", "learn exercises DIR")
	u.press("i")
	u.waitFor(t, "0 of 8 passed", "✗ Crash before COMMIT", "← now")
	u.press("?") // the help says what the marks mean
	u.waitFor(t, "Marks: ✓ pass ✗ fail ? not checked – not run ! error · earlier fails")
	u.press("?")
	u.waitFor(t, "✗ Crash before COMMIT")
	// The module opened is remembered, by its absolute path: learn
	// opens it from elsewhere when given no directory.
	u.waitUntil(t, "the exercises' directory saved with the progress", func() bool {
		b, err := os.ReadFile(progressPath)
		var p struct {
			Dir string `json:"exercises_dir"`
		}
		return err == nil && json.Unmarshal(b, &p) == nil && p.Dir == dir
	})

	save := func(name, from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	save("booking.go", filepath.Join("..", "..", "exercises", "testdata", "steps", "one-transaction", "booking.go"))
	u.waitFor(t, "1 of 8 passed", "✓ Crash before COMMIT")

	if err := os.WriteFile(filepath.Join(dir, "booking.go"), []byte("package main\n\nfunc BookTicket() {\n\tundefinedThing()\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u.waitFor(t, "your module did not build, so nothing was checked", "the last check that ran: 1 of 8 passed", "What the go command said:", "booking.go:4:", "undefined: undefinedThing")

	save("booking.go", filepath.Join("..", "..", "exercises", "testdata", "steps", "one-transaction", "booking.go"))
	u.waitFor(t, "1 of 8 passed", "✓ 1. Seats and booking") // checked: the ladder back, not the build's failure
	u.press("down", "down")                                 // exercise 2, the current one
	u.press("h")
	u.waitFor(t, "Hint 1 of 2 for exercise 2:", "Idempotency-Key (req.Key)")
	u.press("down", "enter") // its first row, played live a step at a time: held until a key lets it go
	u.waitFor(t, "The lost answer · live on your code", "step 1 of 1 · held: → lets it go, space plays on", "Rows (committed) while step 1 was held", "space plays")
	for n := 2; n < 40 && !strings.Contains(flat(u.screen()), "› #1.1 sends commit"); n++ { // to the learner's COMMIT, held
		u.press("right")
		u.waitFor(t, fmt.Sprintf("step %d of %d · held", n, n))
	}
	u.waitFor(t, "› #1.1 sends commit", "sends INSERT INTO bookings", "→ INSERT 0 1", "seats_left 10/10", "bookings: none") // held: nothing committed yet
	u.press("right")                                                                                                        // the COMMIT let go
	u.waitFor(t, "→ COMMIT", "seats_left 8/10", "ada")
	u.press("G", "space")
	u.waitFor(t, "· playing: space pauses", "space pauses")
	u.waitFor(t, "✗ charged more than once")

	// The module removed and written again is watched again.
	u.press("esc")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	u.waitFor(t, "There are no exercises in")
	u.press("i")
	u.waitFor(t, "0 of 8 passed")
	save("booking.go", filepath.Join("..", "..", "exercises", "testdata", "steps", "one-transaction", "booking.go"))
	u.waitFor(t, "1 of 8 passed")
}
