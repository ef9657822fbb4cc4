package lessons

import (
	"errors"
	"strings"
	"testing"
)

// sampleLesson is the smallest page that follows the lesson format.
const sampleLesson = `---
slug: sample
kind: lesson
---

# Sample

## In 1 minute

Once or twice, same effect.

## Picture it

Words first.

` + "```mermaid" + `
sequenceDiagram
  participant B as Browser
  B->>B: think
` + "```" + `

## How it works

` + "```sh" + `
## not a heading inside code
` + "```" + `

## Break it

| Symptom | Cause | Where to look |
| --- | --- | --- |
| a | b | c |

## Say it in an interview

Say it like this (20–30 seconds):

> Keys, **once**, in the ` + "`row`" + `.

## Follow-ups

### Why?

Because.

## Advanced: where the logic lives

In Go.

## Checkpoint

1. First?
2. Second?

## Redraw it

Draw.

## Try this

Run it.
`

// sampleCard is the smallest page that follows the interview format.
const sampleCard = `---
slug: sample
kind: interview
---
# Card?

## Say it in 30 seconds

> Short answer.

## The deeper answer

Long answer.

## Counter-questions

### One?

Yes.

## Where in learn

sim.
`

func TestParseSamples(t *testing.T) {
	lesson, err := parsePage("pages/sample.md", []byte(sampleLesson))
	if err != nil {
		t.Fatalf("sample lesson: %v", err)
	}
	if lesson.Title != "Sample" || len(lesson.Sections) != 10 || len(lesson.Checkpoint) != 2 || len(lesson.BreakIt) != 1 || len(lesson.FollowUps) != 1 {
		t.Errorf("sample lesson parsed as %+v", lesson)
	}
	if lesson.SpokenAnswer != "Keys, once, in the row." {
		t.Errorf("SpokenAnswer = %q", lesson.SpokenAnswer)
	}
	if how, _ := lesson.Section("How it works"); !strings.Contains(how.Markdown, "## not a heading inside code") {
		t.Errorf("a ## line inside fenced code split the section: %q", how.Markdown)
	}
	if lesson.Sections[0].Line != 2 || !strings.HasPrefix(lesson.Markdown, "# Sample\n") {
		t.Errorf("Markdown should start at the title (front matter and blank line dropped); first section at line %d", lesson.Sections[0].Line)
	}
	card, err := parsePage("pages/sample.md", []byte(sampleCard))
	if err != nil {
		t.Fatalf("sample card: %v", err)
	}
	if card.Kind != KindInterview || card.SpokenAnswer != "Short answer." || len(card.FollowUps) != 1 || card.FollowUps[0] != (FollowUp{"One?", "Yes."}) {
		t.Errorf("sample card parsed as %+v", card)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		file     string
		wantLine int    // 1-based line in the file; 0 for the whole page
		wantMsg  string // part of the message
	}{
		{"no front matter", strings.TrimPrefix(sampleLesson, "---\n"), "", 1, "front-matter"},
		{"unclosed front matter", strings.Replace(sampleLesson, "kind: lesson\n---", "kind: lesson\n", 1), "", 6, "is the closing --- missing?"},
		{"unknown kind", strings.Replace(sampleLesson, "kind: lesson", "kind: quiz", 1), "", 3, `kind "quiz"`},
		{"unknown key", strings.Replace(sampleLesson, "kind: lesson", "kind: lesson\ntitle: Sample", 1), "", 4, `key "title"`},
		{"slug not the file name", sampleLesson, "pages/other.md", 1, "use slug: other"},
		{"no title", strings.Replace(sampleLesson, "# Sample", "Sample", 1), "", 6, `"# Title"`},
		{"missing section", strings.Replace(sampleLesson, "## Redraw it\n\nDraw.\n\n", "", 1), "", 55, `section 9 is "Try this", want "Redraw it"`},
		{"missing last section", strings.Replace(sampleLesson, "## Try this\n\nRun it.\n", "", 1), "", 0, `section "Try this" is missing`},
		{"sections out of order", strings.Replace(sampleLesson, "## In 1 minute", "## Picture it first", 1), "", 8, `want "In 1 minute"`},
		{"extra section", sampleLesson + "\n## Extra\n\nMore.\n", "", 63, `unexpected section "Extra"`},
		{"empty section", strings.Replace(sampleLesson, "Draw.\n", "", 1), "", 55, `"Redraw it" is empty`},
		{"no mermaid", strings.Replace(sampleLesson, "```mermaid", "```text", 1), "", 0, "needs a ```mermaid"},
		{"malformed mermaid line", strings.Replace(sampleLesson, "B->>B: think", "B => B think", 1), "", 19, `not a sequenceDiagram statement: "B => B think"`},
		{"message without colon", strings.Replace(sampleLesson, "B->>B: think", "B->>B think", 1), "", 19, "not a sequenceDiagram statement"},
		{"not a sequence diagram", strings.Replace(sampleLesson, "sequenceDiagram", "flowchart LR", 1), "", 17, "only sequenceDiagram"},
		{"diagram with no messages", strings.Replace(sampleLesson, "  B->>B: think\n", "", 1), "", 18, "no messages"},
		{"unclosed fence", sampleLesson + "```text\n## Extra\n", "", 62, "never closed"},
		{"no checkpoint list", strings.Replace(sampleLesson, "1. First?\n2. Second?", "First? Second?", 1), "", 50, "ordered list"},
		{"no break-it table", strings.Replace(sampleLesson, "| a | b | c |", "", 1), "", 28, "at least one row"},
		{"wrong table column", strings.Replace(sampleLesson, "| Symptom | Cause |", "| Symptom | Reason |", 1), "", 30, `"Reason", want "Cause"`},
		{"unescaped pipe in cell", strings.Replace(sampleLesson, "| a | b | c |", "| a | b | c | d |", 1), "", 32, `write a literal pipe as \|`},
		{"no follow-up questions", strings.Replace(sampleLesson, "### Why?\n\n", "", 1), "", 40, `"### "`},
		{"follow-up without answer", strings.Replace(sampleLesson, "### Why?\n\nBecause.\n", "### Why?\n### And?\n\nBecause.\n", 1), "", 42, "needs both"},
		{"no spoken blockquote", strings.Replace(sampleLesson, "> Keys", "Keys", 1), "", 34, "blockquote"},
		{"card without counter-questions", strings.Replace(sampleCard, "### One?\n\n", "", 1), "", 15, "Counter-questions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "pages/sample.md"
			}
			_, err := parsePage(file, []byte(tt.src))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *ParseError", err)
			}
			if pe.File != file || pe.Line != tt.wantLine || !strings.Contains(pe.Msg, tt.wantMsg) {
				t.Errorf("error = %q (line %d), want line %d and %q", err, pe.Line, tt.wantLine, tt.wantMsg)
			}
		})
	}
}

func TestParseCRLF(t *testing.T) {
	p, err := parsePage("pages/sample.md", []byte(strings.ReplaceAll(sampleLesson, "\n", "\r\n")))
	if err != nil {
		t.Fatalf("CRLF page: %v", err)
	}
	if strings.Contains(p.Markdown, "\r") || p.Title != "Sample" {
		t.Errorf("CRLF not normalised: title %q", p.Title)
	}
}
