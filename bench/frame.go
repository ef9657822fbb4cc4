package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// lessonFile is the page `learn lesson` opens, for glow to open the same.
const lessonFile = "lessons/pages/idempotency.md"

// benchFrame times the first frame of learn's home screen and of `learn
// lesson` against the bare Bubble Tea v2 program (bench/bare), and of glow
// opening the same page when glow is installed, each pair launched in turn
// in tmux at 100x30.
func benchFrame(dir string, rounds int) ([]row, error) {
	learn, err := build(dir, "learn", "./cmd/learn")
	if err != nil {
		return nil, err
	}
	bare, err := build(dir, "bare", "./bench/bare")
	if err != nil {
		return nil, err
	}
	t, err := newTmux(100, 30)
	if err != nil {
		return nil, err
	}
	defer t.close()
	page, err := filepath.Abs(lessonFile)
	if err != nil {
		return nil, err
	}
	// learn keeps its progress in directories of the benchmark's own, one
	// for the home screen and one for the lesson: learn reopens the page
	// it was left on, and the home screen must open on itself every time.
	// The person's progress is never touched.
	homeState, lessonState := filepath.Join(dir, "state-home"), filepath.Join(dir, "state-lesson")
	n := 0
	launch := func(command, want string) func() (float64, error) {
		return func() (float64, error) {
			n++
			d, err := t.firstFrame(fmt.Sprintf("run%d", n), command, want, "q")
			return ms(d), err
		}
	}
	// Time to interactive: a key pressed the moment the first text shows,
	// until its effect is on screen (j moves the home screen's cursor, G
	// takes the lesson to its end, any key changes the bare program's line).
	touch := func(command, first string, keys []string, after string) func() (float64, error) {
		return func() (float64, error) {
			n++
			d, err := t.interactive(fmt.Sprintf("run%d", n), command, first, keys, after, "q")
			return ms(d), err
		}
	}
	home := launch("env XDG_STATE_HOME="+homeState+" "+learn, "Lesson: Idempotency")
	lesson := launch("env XDG_STATE_HOME="+lessonState+" "+learn+" lesson", "In 1 minute")
	bareRun := launch(bare, "ready")

	var rows []row
	add := func(what string, a, b func() (float64, error), baseName, target string) error {
		as, bs, ratios, err := pairs(rounds, a, b)
		if err != nil {
			return err
		}
		rows = append(rows, row{"first frame", what,
			fmt.Sprintf("%.0f ms", median(as)), fmt.Sprintf("%s %.0f ms", baseName, median(bs)),
			fmt.Sprintf("%.2fx", median(ratios)), target})
		return nil
	}
	if err := add("home screen (learn)", home, bareRun, "bare", "≤ 1.5x"); err != nil {
		return rows, err
	}
	if err := add("learn lesson", lesson, bareRun, "bare", "≤ 1.6x"); err != nil {
		return rows, err
	}
	homeKey := touch("env XDG_STATE_HOME="+homeState+" "+learn, "Lesson: Idempotency", []string{"j"}, "▸ Play")
	lessonKey := touch("env XDG_STATE_HOME="+lessonState+" "+learn+" lesson", "In 1 minute", []string{"G"}, "Try this")
	bareKey := touch(bare, "ready", []string{"j"}, "pressed j")
	interactive := func(what string, a, b func() (float64, error), baseName, target string) error {
		as, bs, ratios, err := pairs(rounds, a, b)
		if err != nil {
			return err
		}
		rows = append(rows, row{"interactive", what,
			fmt.Sprintf("%.0f ms", median(as)), fmt.Sprintf("%s %.0f ms", baseName, median(bs)),
			fmt.Sprintf("%.2fx", median(ratios)), target})
		return nil
	}
	if err := interactive("home screen, j (learn)", homeKey, bareKey, "bare", "≤ 1.5x"); err != nil {
		return rows, err
	}
	// glow v2 as a person runs it on a page (-p: its pager); built from
	// glow's source when LEARN_BENCH_GLOW names the binary, else the one on
	// PATH.
	glow := os.Getenv("LEARN_BENCH_GLOW")
	if glow == "" {
		glow, _ = exec.LookPath("glow")
	}
	if glow != "" {
		glowRun := launch(glow+" -p "+page, "In 1 minute")
		if err := add("learn lesson", lesson, glowRun, "glow -p", "≤ 1.0x"); err != nil {
			return rows, err
		}
		glowKey := touch(glow+" -p "+page, "In 1 minute", []string{"G"}, "Try this")
		if err := interactive("learn lesson, G", lessonKey, glowKey, "glow -p", "≤ 1.0x"); err != nil {
			return rows, err
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench: no glow (LEARN_BENCH_GLOW or PATH); the lesson is compared with the bare program only")
		if err := interactive("learn lesson, G", lessonKey, bareKey, "bare", "≤ 1.6x"); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// adhoc times two command lines' first frames against each other.
func adhoc(a, b, wa, wb string, rounds int) {
	t, err := newTmux(100, 30)
	if err != nil {
		fatal(err)
	}
	defer t.close()
	n := 0
	launch := func(command, want string) func() (float64, error) {
		return func() (float64, error) {
			n++
			d, err := t.firstFrame(fmt.Sprintf("run%d", n), command, want, "q")
			return ms(d), err
		}
	}
	as, bs, ratios, err := pairs(rounds, launch(a, wa), launch(b, wb))
	if err != nil {
		t.close() // fatal exits without running deferred calls
		fatal(err)
	}
	fmt.Printf("a %.1f ms  b %.1f ms  a/b %.2fx (medians of %d)\n", median(as), median(bs), median(ratios), rounds)
}
