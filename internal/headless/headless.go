// Package headless is the work of learn's commands that run without the
// app, and what they print: cmd/learn parses their command lines and hands
// the rest here.
//
//   - [Demo] (demo.go) is learn demo: one scenario run on a throwaway
//     PostgreSQL and its report, a few lines for a person or one JSON
//     object.
//   - [Lab] (lab.go) is learn lab: every scenario run against a design
//     composed from switches, and its scorecard, in text or JSON.
//   - [CheckSetup] and [Check] (check.go) are learn check: its command
//     line read into the checked API's config (the file's or the
//     example's, with the booking URLs given) and options, or the usage
//     error's words; then the scenarios run through learn's lossy proxy,
//     a row per scenario as it ends, or one JSON object.
//   - [ExercisesInit], [ExercisesDir], [ExercisesCheck] and
//     [ExercisesHint] (exercises.go) are learn exercises init, check and
//     hint: the module written (or its harness restored), the module's
//     directory found, its exercises checked live and their states saved
//     with the progress, and the next hint.
//   - [DownloadReport] (download.go) is how a download of PostgreSQL goes,
//     in plain lines, for learn demo, lab, serve and doctor.
//   - [ProgressSummary], [ProgressExport] and [ProgressReset] (progress.go)
//     are learn progress and its subcommands, over the learner's progress
//     file (package progress).
//
// Each returns an exit code and an error, as [exit.New] takes them: 0 when
// the command did its work (for demo and lab, whatever the verdicts say),
// 1 with what failed, 128 + the signal when one ended it, having removed
// what it made. Nothing here imports Bubble Tea.
package headless

import "github.com/charmbracelet/x/term"

// isTerminal reports whether f is a terminal (an *os.File on one).
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}
