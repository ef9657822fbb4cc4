package seqdiag

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// Every line of a diagram is exactly its width in cells, whatever the
// labels hold: wide characters, emoji, long text.
func TestSeqDiagramKeepsItsWidth(t *testing.T) {
	lanes := []Lane{{"b", "Browser 🌐"}, {"a", "API-1"}, {"r", "Redis"}, {"p", "Postgres 数据库"}}
	arrows := []Arrow{
		{From: "b", To: "a", Label: "book 2 seats, key 3f2a9c1d…"},
		{From: "a", To: "p", Label: "BEGIN; lock event 1 🔒"},
		{From: "a", To: "b", Label: "200 b1 lost 🙈", Lost: true},
		{From: "p", To: "a", Label: "行已锁定 (row locked)", Dashed: true},
		{From: "b", To: "b", Label: "wait 1s ⏳ then retry with the same key"},
		{From: "p", To: "p", Label: "COMMIT ✅"},
		{From: "a", To: "r", Label: "SET key b1 EX 86400"},
		{From: "x", To: "b", Label: "unknown lane"},
	}
	for _, w := range []int{40, 58, 80, 117, 200} {
		d := New(lanes, w)
		lines := []string{d.Header(), d.Rail()}
		for _, a := range arrows {
			lines = append(lines, d.Arrow(a))
		}
		for i, l := range lines {
			if got := uniseg.StringWidth(l); got != w {
				t.Errorf("width %d, line %d is %d cells: %q", w, i, got, l)
			}
		}
	}
}

func TestSeqArrowShapes(t *testing.T) {
	d := New([]Lane{{"b", "Browser"}, {"a", "API"}}, 40)
	tests := []struct {
		a          Arrow
		want, lack []string
	}{
		{Arrow{From: "b", To: "a", Label: "go"}, []string{"▶", " go ", "─"}, []string{"◀", "✕"}},
		{Arrow{From: "a", To: "b", Label: "back", Dashed: true}, []string{"◀", "╌", " back "}, []string{"▶"}},
		{Arrow{From: "a", To: "b", Label: "lost", Lost: true}, []string{"✕", "╌"}, []string{"◀", "▶"}},
		{Arrow{From: "b", To: "b", Label: "note"}, []string{"↻ note"}, []string{"▶", "◀"}},
	}
	for _, tt := range tests {
		got := d.Arrow(tt.a)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", tt.a, got, w)
			}
		}
		for _, w := range tt.lack {
			if strings.Contains(got, w) {
				t.Errorf("%+v: %q has %q", tt.a, got, w)
			}
		}
	}
}

// A note never draws over another lane's lifeline, at any width, however
// long its text: every rail stays a rail.
func TestNotesKeepEveryLifeline(t *testing.T) {
	lanes := []Lane{{"b", "Browser"}, {"a1", "API-1"}, {"a2", "API-2"}, {"p", "Postgres"}}
	long := "memory: key → none, and a great deal more text than fits anywhere"
	for _, w := range []int{40, 60, 80, 120} {
		d := New(lanes, w)
		rail := []rune(d.Rail())
		for _, on := range []string{"b", "a1", "a2", "p"} {
			line := []rune(d.Arrow(Arrow{From: on, To: on, Label: long}))
			for i, r := range rail {
				if r == '│' && line[i] != '│' {
					t.Errorf("width %d, note on %s: the lifeline at %d is drawn over:\n%s", w, on, i, string(line))
				}
			}
			if !strings.Contains(string(line), "↻ mem") {
				t.Errorf("width %d, note on %s lost its text: %q", w, on, string(line))
			}
		}
	}
}
