package lessons

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitRow(t *testing.T) {
	tests := []struct {
		row  string
		want []string
	}{
		{"| a | b | c |", []string{"a", "b", "c"}},
		{"a | b | c", []string{"a", "b", "c"}},
		{"|  spaced  |b|c|", []string{"spaced", "b", "c"}},
		{`| grep a \| wc | b | c |`, []string{"grep a | wc", "b", "c"}},
		{`| a | b | ends with \|`, []string{"a", "b", "ends with |"}},
		{"| `a|b` | c |", []string{"`a", "b`", "c"}}, // as in GFM: escape pipes in code spans
		{`| a\b | c |`, []string{`a\b`, "c"}},
		{"| | b |", []string{"", "b"}},
	}
	for _, tt := range tests {
		if got := splitRow(tt.row); !slices.Equal(got, tt.want) {
			t.Errorf("splitRow(%q) = %q, want %q", tt.row, got, tt.want)
		}
	}
}

func TestReadTable(t *testing.T) {
	cols := []string{"Symptom", "Cause", "Where to look"}
	tests := []struct {
		name  string
		src   string
		rows  [][]string
		found bool
		err   string
	}{
		{"pipes in cells", "intro\n\n| symptom | cause | where to look |\n|:--|:-:|--:|\n| `a \\| b` | c | d |\n| e | f | g |\n\nafter | not a row",
			[][]string{{"`a | b`", "c", "d"}, {"e", "f", "g"}}, true, ""},
		{"no outer pipes", "Symptom | Cause | Where to look\n--- | --- | ---\nx | y | z",
			[][]string{{"x", "y", "z"}}, true, ""},
		{"no table", "just | text\nno delimiter", nil, false, ""},
		{"table in code is ignored", "```\n| Symptom | Cause | Where to look |\n| --- | --- | --- |\n```", nil, false, ""},
		{"two columns", "| Symptom | Cause |\n| --- | --- |\n| a | b |", nil, true, "has 2 columns"},
		{"short delimiter", "| Symptom | Cause | Where to look |\n| --- | --- |\n| a | b | c |", nil, true, "delimiter row has 2 columns"},
		{"empty cell", "| Symptom | Cause | Where to look |\n| --- | --- | --- |\n| a |  | c |", nil, true, `"Cause" is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := strings.Split(tt.src, "\n")
			mask, _ := Fences(lines)
			rows, found, err := readTable(lines, mask, span{0, len(lines)}, cols)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.msg, tt.err) {
					t.Fatalf("error = %+v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error at line %d: %s", err.line, err.msg)
			}
			if found != tt.found || !slices.EqualFunc(rows, tt.rows, slices.Equal) {
				t.Errorf("rows = %q, found %v; want %q, %v", rows, found, tt.rows, tt.found)
			}
		})
	}
}

func TestOrderedList(t *testing.T) {
	src := "Intro.\n\n1. First\n   continued.\n2) Second\nstill second\n\n   indented after blank\n3.\n\nNot a list.\n10. Tenth\n```\n4. in code\n```"
	lines := strings.Split(src, "\n")
	mask, _ := Fences(lines)
	got := orderedList(lines, mask, span{0, len(lines)})
	want := []string{"First continued.", "Second still second indented after blank", "", "Tenth"}
	if !slices.Equal(got, want) {
		t.Errorf("orderedList = %q, want %q", got, want)
	}
}

func TestBlockquote(t *testing.T) {
	src := "Say it:\n\n> one\n> two\n>\n> three\n\n```\n> code\n```"
	lines := strings.Split(src, "\n")
	mask, _ := Fences(lines)
	if got := blockquote(lines, mask, span{0, len(lines)}); got != "one two\n\nthree" {
		t.Errorf("blockquote = %q", got)
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"**bold** and *em* and __strong__", "bold and em and strong"},
		{"`user_id` and snake_case_name", "user_id and snake_case_name"},
		{"see [the lesson](idempotency.md) now", "see the lesson now"},
		{`a \| pipe and a \* star`, "a | pipe and a * star"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"  many   spaces ", "many spaces"},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHeadingAndAnchor(t *testing.T) {
	tests := []struct {
		line  string
		level int
		text  string
		ok    bool
	}{
		{"## Break it", 2, "Break it", true},
		{"   ## Indented", 2, "Indented", true},
		{"    ## code", 2, "", false},
		{"### Sub", 2, "", false},
		{"##NoSpace", 2, "", false},
		{"## Closed ##", 2, "Closed", true},
		{"## C# tips", 2, "C# tips", true},
		{"### Why?", 3, "Why?", true},
	}
	for _, tt := range tests {
		text, ok := heading(tt.line, tt.level)
		if text != tt.text || ok != tt.ok {
			t.Errorf("heading(%q, %d) = %q, %v; want %q, %v", tt.line, tt.level, text, ok, tt.text, tt.ok)
		}
	}
	for in, want := range map[string]string{
		"Advanced: where the logic lives": "advanced-where-the-logic-lives",
		"Say it in 30 seconds":            "say-it-in-30-seconds",
		"Follow-ups":                      "follow-ups",
		"Où ça?":                          "où-ça",
	} {
		if got := anchor(in); got != want {
			t.Errorf("anchor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFences(t *testing.T) {
	lines := strings.Split("a\n````mermaid x\n```\nstill code\n````\nb\n~~~\nopen", "\n")
	mask, blocks := Fences(lines)
	if want := []bool{false, true, true, true, true, false, true, true}; !slices.Equal(mask, want) {
		t.Errorf("mask = %v, want %v", mask, want)
	}
	if want := []Fence{{1, 4, "mermaid"}, {6, -1, ""}}; !slices.Equal(blocks, want) {
		t.Errorf("blocks = %+v, want %+v", blocks, want)
	}
}
