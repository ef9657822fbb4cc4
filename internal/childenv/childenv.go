// Package childenv is what learn's supervising parent hands the app's
// process (the child) through its environment, so that the child does not
// find out again what the parent found out once: the terminal's colour
// profile and TMUX (LEARN_COLOR_PROFILE, LEARN_TMUX), and one way of
// measuring cells (RUNEWIDTH_EASTASIAN=0). The parent passes [Environ] to
// the supervisor as the child's environment; the child calls [Take] first
// thing in main; [EastAsianWidths] tells the parent that its own widths
// are not the child's (so it draws no first frame).
package childenv

import (
	"os"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// The terminal's colour profile is found out once, by the supervising
// parent, and handed to the app. Finding it out runs `tmux info` inside
// tmux (colorprofile asks tmux whether it passes true colour on), a
// process start of its own, and lipgloss does it in its package
// initialisation, on every start: the child, started inside the same
// terminal, would ask again, and Bubble Tea a third time, each before the
// first frame.
const (
	// envColorProfile carries the parent's profile (a colorprofile.Profile
	// as a number) to the child.
	envColorProfile = "LEARN_COLOR_PROFILE"
	// envTmux carries TMUX past the child's package initialisation, which
	// would otherwise run `tmux info` once more; the child puts it back
	// first thing in main.
	envTmux = "LEARN_TMUX"
)

// envEastAsian is read by x/ansi (so by Lip Gloss and Bubble Tea's
// renderer) and by go-runewidth (Bubbles' text inputs) in their package
// initialisation: set, they take the "ambiguous" characters (the box
// drawing, the arrows) as two cells, while learn's own layout (the
// sequence diagram) and terminals such as tmux draw them in one. learn
// measures one way everywhere: the child gets it as 0, which go-runewidth
// also prefers over the locale.
const envEastAsian = "RUNEWIDTH_EASTASIAN"

// Environ is the environment of the supervised child: this one, with the
// colour profile lipgloss found for standard output, TMUX set aside for
// the child to put back, and envEastAsian as 0.
func Environ() []string {
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "TMUX="):
			env = append(env, envTmux+"="+strings.TrimPrefix(kv, "TMUX="))
		case strings.HasPrefix(kv, envTmux+"="), strings.HasPrefix(kv, envColorProfile+"="), strings.HasPrefix(kv, envEastAsian+"="):
		default:
			env = append(env, kv)
		}
	}
	return append(env, envColorProfile+"="+strconv.Itoa(int(lipgloss.Writer.Profile)), envEastAsian+"=0")
}

// EastAsianWidths reports whether this process's x/ansi takes ambiguous
// characters as two cells (envEastAsian was set when it started).
func EastAsianWidths() bool {
	ea, err := strconv.ParseBool(os.Getenv(envEastAsian))
	return err == nil && ea
}

// Take, in the child, puts TMUX back and takes the parent's
// colour profile as lipgloss's (the app's renderer uses it too, see
// ui.Run). Without them (learn runs unsupervised) it changes nothing.
func Take() {
	if v, ok := os.LookupEnv(envTmux); ok {
		os.Setenv("TMUX", v)
		os.Unsetenv(envTmux)
	}
	if v, ok := os.LookupEnv(envColorProfile); ok {
		os.Unsetenv(envColorProfile)
		if n, err := strconv.Atoi(v); err == nil && n >= int(colorprofile.NoTTY) && n <= int(colorprofile.TrueColor) {
			lipgloss.Writer.Profile = colorprofile.Profile(n)
		}
	}
}
