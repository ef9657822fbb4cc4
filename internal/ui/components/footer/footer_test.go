package footer

import (
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

func bind(k, desc string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc)) }

var (
	back = bind("esc", "back")
	hlp  = bind("?", "help")
	quit = bind("q", "quit")
	// The play screen's keys, most important first.
	play = []key.Binding{bind("space", "play/pause"), bind("n/→/pgdn", "step"), bind("p/←/pgup", "back a step"),
		bind("v", "correct/broken"), bind("r", "restart"), bind("+", "faster"), bind("-", "slower"), back, hlp, quit}
)

func pinned(b key.Binding) bool {
	return slices.ContainsFunc([]key.Binding{back, hlp, quit}, func(p key.Binding) bool { return slices.Equal(p.Keys(), b.Keys()) })
}

// hints is the line's hints, split at the separators.
func hints(line string) []string { return strings.Split(ansi.Strip(line), Separator) }

func TestFooterKeepsThePinnedKeysAndSaysWhatItDrops(t *testing.T) {
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{200, []string{"space play/pause", "n/→/pgdn step", "p/←/pgup back a step", "v correct/broken", "r restart", "+ faster", "- slower", "esc back", "? help", "q quit"}},
		{88, []string{"space play/pause", "n/→/pgdn step", "p/←/pgup back a step", "…", "esc back", "? help", "q quit"}},
		{80, []string{"space play/pause", "n/→/pgdn step", "…", "esc back", "? help", "q quit"}},
		{69, []string{"space play/pause", "n/→/pgdn step", "…", "esc back", "? help", "q quit"}},
		{60, []string{"space play/pause", "…", "esc back", "? help", "q quit"}},
		{45, []string{"…", "esc back", "? help", "q quit"}},
		{28, []string{"…", "esc back", "? help", "q q…"}}, // cut only below the pinned keys' width
	} {
		line := View(help.Styles{}, play, tc.width, pinned)
		if w := ansi.StringWidth(line); w > tc.width {
			t.Errorf("at %d the line is %d wide: %q", tc.width, w, line)
		}
		if got := hints(line); !slices.Equal(got, tc.want) {
			t.Errorf("at %d: %q, want %q", tc.width, got, tc.want)
		}
	}
}

// Below the pinned keys' width the line is still cut at the window, with
// "…" at its end; disabled keys never show.
func TestFooterNeverRunsPastTheWindow(t *testing.T) {
	off := bind("v", "correct/broken")
	off.SetEnabled(false)
	keys := append([]key.Binding{off}, play...)
	full := ansi.StringWidth(View(help.Styles{}, keys, 1000, pinned))
	for w := 1; w <= full+10; w++ {
		line := View(help.Styles{}, keys, w, pinned)
		if got := ansi.StringWidth(line); got > w {
			t.Fatalf("at %d the line is %d wide: %q", w, got, line)
		}
		if strings.Count(line, "v correct/broken") > 1 {
			t.Fatalf("a disabled key shows: %q", line)
		}
		if w < full && !strings.Contains(line, Ellipsis) {
			t.Errorf("at %d keys were dropped without a …: %q", w, line)
		}
	}
}
