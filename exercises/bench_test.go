package exercises

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A save and its scorecard for one exercise, the way the screen checks
// after a save: booking.go changed (so go build compiles it again, with a
// warm build cache), then the exercise and those before it checked. The
// module is the reference of the exercise before under-lock, so under-lock
// is the one the learner is on.
func BenchmarkSaveToScorecard(b *testing.B) {
	dir := moduleAt(b, "replay")
	path := filepath.Join(dir, "booking.go")
	src, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Check(b.Context(), dir, testDB, Options{Exercises: UpTo("under-lock")}); err != nil { // warm the build cache
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// An edit that changes the program: a new constant, a new binary.
		if err := os.WriteFile(path, fmt.Appendf(src, "\nconst edit%d = %d\n", i, i), 0o644); err != nil {
			b.Fatal(err)
		}
		rep, err := Check(b.Context(), dir, testDB, Options{Exercises: UpTo("under-lock")})
		if err != nil || rep.Stopped != "" || rep.Current != "under-lock" {
			b.Fatalf("%v %q current %q", err, rep.Stopped, rep.Current)
		}
	}
}

// The whole ladder on learn's reference solution: every exercise's checks,
// the build included (warm cache).
func BenchmarkWholeLadder(b *testing.B) {
	dir := moduleAt(b, Ladder[len(Ladder)-1].ID)
	for b.Loop() {
		rep, err := Check(b.Context(), dir, testDB, Options{})
		if err != nil || rep.Passed != len(Ladder) {
			b.Fatalf("%v: %d passed", err, rep.Passed)
		}
	}
}
