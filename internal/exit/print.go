package exit

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"unicode"
	"unicode/utf8"

	"charm.land/fang/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"
)

// Handler prints an error once: "learn: " and the message when stderr is
// not a terminal (a log, a pipe, a test), fang's styled block when it is.
// A usage error adds where to read the usage. An error with an empty
// message (a command that has said everything already) prints nothing.
func Handler(stderr io.Writer) fang.ErrorHandler {
	return func(w io.Writer, styles fang.Styles, err error) {
		msg := err.Error()
		if msg == "" || errors.Is(err, syscall.EPIPE) {
			return // nothing to say: the reader of the output left (learn lesson | head)
		}
		hint := ""
		if u, ok := errors.AsType[*Error](err); ok && u.UsageOf != "" {
			hint = fmt.Sprintf("Run '%s --help' for usage.", u.UsageOf)
		}
		if !isTerminal(stderr) {
			fmt.Fprintln(w, "learn:", msg)
			if hint != "" {
				fmt.Fprintln(w, hint)
			}
			return
		}
		fmt.Fprintln(w, styles.ErrorHeader.String())
		fmt.Fprintln(w, styles.ErrorText.Render(msg))
		fmt.Fprintln(w)
		if hint != "" {
			fmt.Fprintln(w, styles.ErrorText.Render(hint))
			fmt.Fprintln(w)
		}
	}
}

// Styles are the styles of fang's error block, on a dark background
// unless the person chose the light theme, picked without asking the
// terminal.
func Styles(stderr io.Writer) fang.Styles {
	cs := fang.DefaultColorScheme(lipgloss.LightDark(true))
	width := 80
	if fd, ok := stderr.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(fd.Fd()); err == nil && w > 0 {
			width = w
		}
	}
	return fang.Styles{
		ErrorHeader: lipgloss.NewStyle().Foreground(cs.ErrorHeader[0]).Background(cs.ErrorHeader[1]).
			Bold(true).Padding(0, 1).Margin(1).MarginLeft(2).SetString("ERROR"),
		ErrorText: lipgloss.NewStyle().MarginLeft(2).Width(max(width-4, 20)).Transform(capitalise),
	}
}

// capitalise upper-cases the first letter, as fang's error text does.
func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// isTerminal reports whether f is a terminal (an *os.File on one).
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}
