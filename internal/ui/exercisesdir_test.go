package ui

import (
	"path/filepath"
	"testing"

	"github.com/learn-idempotency/learn/exercises"
)

// Given no directory, the app opens the exercises' module where the
// learner is (the current directory itself, or its ./learn-exercises),
// else the one last opened, while it still holds the module; else it
// offers to write ./learn-exercises. A directory that merely exists is not
// a module.
func TestExercisesDirWhenNoneIsGiven(t *testing.T) {
	module := func() string {
		dir := filepath.Join(t.TempDir(), "x")
		if err := exercises.Write(dir, false); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	elsewhere, inside, empty := module(), module(), t.TempDir()
	parent := filepath.Dir(module()) // holds x, not learn-exercises
	withDefault := t.TempDir()
	if err := exercises.Write(filepath.Join(withDefault, DefaultExercisesDir), false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cwd, remembered, want string
	}{
		{"the last opened, from elsewhere", empty, elsewhere, elsewhere},
		{"the current directory is the module", inside, elsewhere, inside},
		{"./learn-exercises is the module", withDefault, elsewhere, DefaultExercisesDir},
		{"nothing remembered", empty, "", DefaultExercisesDir},
		{"the last opened is gone", empty, filepath.Join(empty, "gone"), DefaultExercisesDir},
		{"the last opened is not a module", empty, parent, DefaultExercisesDir},
		{"a relative path is not taken", empty, "x", DefaultExercisesDir},
	} {
		if got := ExercisesDirFor(tc.cwd, tc.remembered); got != tc.want {
			t.Errorf("%s: ExercisesDirFor(%q, %q) = %q, want %q", tc.name, tc.cwd, tc.remembered, got, tc.want)
		}
	}
}
