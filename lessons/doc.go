// Package lessons holds the pages of learn as Markdown files embedded in the
// binary, and the loader that turns them into typed [Page] values: sections,
// checkpoint questions, break-it rows, follow-ups, the spoken interview answer
// and the sequence diagram. The UI renders these values; this package imports
// nothing from the UI (no Bubble Tea, Lip Gloss or Glamour).
//
// # Page format
//
// Each page is a file pages/<slug>.md. It starts with a front-matter block,
// then a level-one title:
//
//	---
//	slug: idempotency
//	kind: lesson
//	---
//	# Idempotency
//
// The front matter has exactly two keys: slug (must equal the file name
// without ".md") and kind ("lesson" or "interview"). The title comes from the
// "# " line, never from the front matter. [Page.Markdown] is everything after
// the front matter, so a renderer never sees it.
//
// Every "## " heading (outside fenced code) starts a section. The section
// titles, in order, are fixed per kind:
//
//   - lesson: In 1 minute, Picture it, How it works, Break it, Say it in an
//     interview, Follow-ups, Advanced: where the logic lives, Checkpoint,
//     Redraw it, Try this.
//   - interview: Say it in 30 seconds, The deeper answer, Counter-questions,
//     Where in learn.
//
// Inside the sections:
//
//   - the first fenced block tagged mermaid holds a sequenceDiagram
//     (lesson: in Picture it); see [Sequence] for the subset understood;
//   - Break it holds a pipe table with the columns Symptom | Cause | Where to
//     look; a literal pipe inside a cell is written \|;
//   - Follow-ups (lesson) and Counter-questions (interview) hold one "### "
//     heading per question, followed by its answer;
//   - Say it in an interview (lesson) and Say it in 30 seconds (interview)
//     hold the spoken answer as a "> " blockquote;
//   - Checkpoint holds the questions as an ordered list ("1. ").
//
// A page that breaks these rules fails [Load] with a [*ParseError] naming the
// file and line; the tests load every embedded page, so a broken page fails
// `go test` instead of the program.
package lessons
