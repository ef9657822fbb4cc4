// Package quiz turns the lesson into practice: question kinds and their
// grading, the question sets built from the lesson pages (Checkpoint, Break
// it, Predict then run, Redraw it), the timed interview drill with
// spaced-repetition flashcards, and the rules that read and change the
// learner's progress (package progress keeps it, and its file).
//
// Everything here is pure logic and plain data. A live question and a predict question
// name a scenario of package sim; the screens run it on PostgreSQL through
// internal/live and hand the report to [SymptomOf] or [GradePredict].
// Nothing imports Bubble Tea, Lip Gloss or Glamour: the screens in
// internal/ui read this package, never the reverse.
//
// # Where to start reading
//
// question.go holds the kinds and [Question]; sets.go the Checkpoint and
// the list of sets ([Sets]); breakit.go the Break it set, places.go its one
// pool of places to look ([Places]); predict.go the predict kind, its
// measures and grader, predictset.go its questions ([PredictSet]);
// redraw.go the Redraw set and its frames and blanks ([Frame]); typed.go
// the check of a typed answer against the key points ([Cue], [Mentions]);
// grade.go the graders; shuffle.go the order choices are shown in
// ([ShowOrder], [Shown]); drill.go the interview drill, schedule.go its
// flashcards' schedule; summary.go the text of `learn progress`.
//
// # Recall, not recognition
//
// The screens show every list of choices (choices, causes, places, a
// prediction's choices, a blank's choices) in an order of their own, new
// on every attempt and never the order of the attempt before
// ([ShowOrder]); graders and saved answers take the question's own
// indices, so an answer means the same whatever order it was picked in.
// The package tests hold every list of options to a length band (the
// longest at most 1.5 times the shortest) and the right option to echo the
// prompt no more than the best wrong one.
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
//   - [GradeLive]: half for the cause, half for where to look (one pool
//     of places for every question, [Places]);
//   - [GradePredict]: one point per prediction (the answers, the booking
//     rows, the seats taken, the guard that acts), each graded from the
//     report of the scenario's own run ([Measured]).
//
// # Progress
//
// The learner's record is a [progress.Progress], kept by a
// [progress.Store]; this package holds the rules over it, not the file:
// [Known] is the questions a saved answer must name (the store's Known),
// [Rate] applies a flashcard's rating through [Schedule], [Due] and
// [DueToday] read the schedules, [ChallengesPassed] counts the lab's
// challenges, [Seconds] the drill's countdown, and [Summary] is the text of
// `learn progress` ([IsBlank]: nothing to show). known.go, schedule.go,
// challenges.go, drill.go and summary.go hold them.
package quiz
