package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
)

// Every rendered line fits the wrap width, in every style: Glamour's own
// blockquote overflows by a cell, which is why learn restyles quotes.
func TestRenderedPagesFitTheirWidth(t *testing.T) {
	for _, p := range lessons.All() {
		for _, style := range []string{"dark", "light", "notty"} {
			for _, w := range []int{58, 60, 78, 80, 98, 100} {
				out, err := Render(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				for i, line := range strings.Split(out, "\n") {
					if lw := ansi.StringWidth(line); lw > w {
						t.Errorf("%s %s at %d: line %d is %d wide: %q", p.Slug, style, w, i+1, lw, ansi.Strip(line))
					}
				}
			}
		}
	}
}

// The spoken answer is one quote block: every one of its lines carries the
// same indent (Glamour's own style dropped the bar from words that spilled).
func TestSpokenAnswerWrapsAsOneBlock(t *testing.T) {
	for _, p := range lessons.All() {
		first := strings.Fields(p.SpokenAnswer)[0]
		for _, style := range []string{"dark", "notty"} {
			for _, w := range []int{60, 70, 80, 90, 100} {
				out, err := Render(p, w, style)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(ansi.Strip(out), "\n")
				prefix := func(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " │|"))] }
				start := -1
				for i, l := range lines {
					if strings.HasPrefix(strings.TrimLeft(l, " │|"), first+" ") && i > 0 && strings.Contains(strings.Join(lines[max(0, i-3):i], " "), "seconds") {
						start = i
						break
					}
				}
				if start < 0 {
					t.Fatalf("%s %s %d: spoken answer not found", p.Slug, style, w)
				}
				want := prefix(lines[start])
				for i := start; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
					if got := prefix(lines[i]); got != want {
						t.Errorf("%s %s %d: quote line %q starts %q, not %q", p.Slug, style, w, lines[i], got, want)
					}
				}
			}
		}
	}
}

func TestCodeSpansSurviveRendering(t *testing.T) {
	md := "Run `learn demo concurrent-copies --copies 10` now."
	if got := restoreCode(keepCodeWhole(md)); got != md {
		t.Errorf("round trip = %q", got)
	}
	if strings.Contains(keepCodeWhole(md), "concurrent-copies") {
		t.Error("the hyphen inside code was left breakable")
	}
	if !strings.Contains(keepCodeWhole(md), "Run ") {
		t.Error("text outside code was changed")
	}
}

// StyleIn reads its own environment: a session's NO_COLOR turns colour off
// whatever the server's environment says.
func TestStyleInReadsItsOwnEnvironment(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		theme string
		get   func(string) string
		want  string
	}{
		{"dark", env(), "dark"},
		{"light", env(), "light"},
		{"light", env("NO_COLOR", "1"), "notty"},
		{"dark", env("GLAMOUR_STYLE", "dracula", "NO_COLOR", "1"), "dracula"},
	} {
		if got := StyleIn(tc.theme, false, tc.get); got != tc.want {
			t.Errorf("StyleIn(%s) = %s, want %s", tc.theme, got, tc.want)
		}
	}
}
