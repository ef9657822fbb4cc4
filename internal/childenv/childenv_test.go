package childenv

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// The parent's environment for the child sets TMUX aside (the child's
// package initialisation would run `tmux info` again), carries the colour
// profile and makes widths one way; the child, taking it, has TMUX back,
// the parent's profile, and no variable of learn's left over.
func TestTheChildGetsTMUXAndTheProfileBack(t *testing.T) {
	t.Setenv("TMUX", "/tmp/tmux-1000/default,42,0")
	t.Setenv(envEastAsian, "1")
	t.Setenv(envColorProfile, "stale")
	was := lipgloss.Writer.Profile
	t.Cleanup(func() { lipgloss.Writer.Profile = was })
	lipgloss.Writer.Profile = colorprofile.ANSI256

	env := Environ()
	for _, want := range []string{envTmux + "=/tmp/tmux-1000/default,42,0", envColorProfile + "=" + strconv.Itoa(int(colorprofile.ANSI256)), envEastAsian + "=0"} {
		if !slices.Contains(env, want) {
			t.Errorf("the child's environment lacks %s: %q", want, env)
		}
	}
	for _, gone := range []string{"TMUX=/tmp/tmux-1000/default,42,0", envEastAsian + "=1", envColorProfile + "=stale"} {
		if slices.Contains(env, gone) {
			t.Errorf("the child's environment holds %s", gone)
		}
	}

	// The child: its environment is env (the test's own put back after).
	saved := os.Environ()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	lipgloss.Writer.Profile = colorprofile.NoTTY
	Take()
	if got := os.Getenv("TMUX"); got != "/tmp/tmux-1000/default,42,0" {
		t.Errorf("TMUX in the child = %q", got)
	}
	if lipgloss.Writer.Profile != colorprofile.ANSI256 {
		t.Errorf("the child's profile = %v, want the parent's %v", lipgloss.Writer.Profile, colorprofile.ANSI256)
	}
	for _, k := range []string{envTmux, envColorProfile} {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%s is left in the child", k, v)
		}
	}
	if EastAsianWidths() {
		t.Errorf("the child takes ambiguous characters as two cells")
	}
}

// A profile that is no profile (out of range, not a number) is ignored:
// the child keeps its own.
func TestTakeIgnoresAProfileOutOfRange(t *testing.T) {
	was := lipgloss.Writer.Profile
	t.Cleanup(func() { lipgloss.Writer.Profile = was })
	for _, v := range []string{"99", "-1", "truecolor"} {
		lipgloss.Writer.Profile = colorprofile.ASCII
		t.Setenv(envColorProfile, v)
		Take()
		if lipgloss.Writer.Profile != colorprofile.ASCII {
			t.Errorf("%s=%s: profile %v, want it unchanged", envColorProfile, v, lipgloss.Writer.Profile)
		}
	}
}
