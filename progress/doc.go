// Package progress is what learn remembers about a learner, and the file
// it is kept in: the pages read, every answer and score, the design lab's
// challenges passed, the flashcards' schedules, the drill's countdown, and
// where the learner left off.
//
// It is plain data and the store that keeps it; the rules that read and
// change it live with what they are about (package quiz: which questions
// exist, grading, the schedule of a card, the summary `learn progress`
// prints). Nothing here imports quiz, sim or any UI package: the screens in
// internal/ui and the commands in cmd/learn read this package, never the
// reverse.
//
// # Where to start reading
//
// progress.go holds [Progress] and its records ([SetProgress], [Answer],
// [Review]); place.go the [Place], one place in the app (a [Page], what it
// shows, where on it): the one identity of a screen, which the app opens,
// every page stands at, the file saves as Progress.Resume, and a workshop
// compares; store.go the [Store] ([Store.Load],
// [Store.Update], [Store.Reset], [DefaultPath]); peek.go the read-only
// ways in for the commands that only show ([Store.Peek], [Store.Export]);
// decode.go the file format and what a file that is not a progress file
// is said as; fields.go the field-by-field reading that costs a value
// that does not fit that value, not the file; known.go what names no
// question of this learn ([Store.Known]); migrate.go the older versions
// (0, and 1, whose resume place had a "screen" and a scenario's variant in
// "section"); readfile.go the one way a progress file is read (never
// blocking, within [MaxFileSize]).
//
// # The contract of the file
//
// [Store] keeps a [Progress] as JSON with a schema version
// ([CurrentVersion]), under the XDG state directory ([DefaultPath]).
// Writes are atomic (a temporary file, fsync, rename, fsync of the
// directory) and serialised between processes by a lock file, so two
// learn processes saving at once lose nothing. A file that cannot be
// parsed is moved aside and learn goes on; a value that does not fit costs
// that value, not the file (a copy of the file as it was is kept); a file
// of an older version is migrated, the original kept beside it; a newer
// version's file is never touched; top-level fields this learn does not
// know are written back as they were. A file the learner made read-only is
// never replaced. [Store.Peek] reads without changing anything, for the
// commands that only show.
package progress
