// Package quiz turns the lesson into practice: question kinds and their
// grading, the question sets built from the lesson pages (Checkpoint, Break
// it, Redraw it), the timed interview drill with spaced-repetition flashcards,
// and the learner's saved progress.
//
// Everything here is pure logic and plain data, except [Store], which reads
// and writes the progress file. A live question names a scenario of package
// sim; the screens run it on PostgreSQL through internal/live and hand the
// report to [SymptomOf]. Nothing imports Bubble Tea, Lip Gloss or Glamour:
// the screens in internal/ui read this package, never the reverse.
//
// # Where the questions come from
//
// The question text is quiz's own, written from the facts of the lesson page
// "Idempotency" and the interview card "How do you make a booking retry safe
// across API instances?" (package lessons). Whatever the
// pages already say in learn's words (checkpoint questions, break-it rows,
// the sequence diagram, the spoken answers, follow-ups and counter-questions)
// is read from the loaded pages, so a change of the page shows up here; a page
// that no longer has the shape the sets rely on makes the sets panic, and the
// package tests catch that before a release (see [Checkpoint]).
//
// # Grading
//
// Every grader is a pure function of a [Question] and the learner's input and
// returns a [Result] with a score from 0 to 1:
//
//   - [GradeChoice]: single choice (exactly one pick) and multiple choice
//     (partial credit: right picks minus wrong picks, over the right ones);
//   - [GradeOrder]: one point per step in its right place and, for the
//     redraw, one per blank of its [Frame] filled in right (what each
//     arrow carries);
//   - [GradeShort], [GradeSpoken]: the learner ticks the key points of
//     the model answer, and each tick is checked against what they typed
//     ([Cue], [Mentions]): a point ticked but not mentioned counts
//     [UnsaidCredit] (half); a drill answer said aloud, nothing typed, is
//     graded by the ticks alone;
//   - [GradeLive]: half for the cause, half for where to look.
//
// # Progress
//
// [Store] keeps a [Progress] as JSON with a schema version, under the XDG
// state directory ([DefaultPath]). Writes are atomic and serialised between
// processes by a lock file, so two learn processes saving at once lose
// nothing; a file that cannot be parsed is moved aside and learn goes on,
// and a value that does not fit costs that value, not the file. A file the
// learner made read-only is never replaced. [Store.Peek] reads without
// changing anything, for the commands that only show.
package quiz
