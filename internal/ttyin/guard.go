// Package ttyin guards what a terminal sends before Bubble Tea reads it.
//
// Bubble Tea v2 decodes a terminal's input with ultraviolet's reader, which
// runs every chunk through charmbracelet/x/ansi's sequence decoder. That
// decoder keeps a sequence's parameters in an array of 32
// (parser.MaxParamsSize) and indexes it without a bound: a CSI or DCS
// sequence with 32 separators (';' or ':') followed by one more parameter
// byte panics it ("index out of range [32] with length 32"). The panic is
// in Bubble Tea's input goroutine, where nothing can recover it: locally it
// ends learn, over SSH the whole workshop. It is the case in x/ansi v0.11.9
// (the newest release) and on its main branch.
//
// Guard is a byte filter that sits between the terminal (or an SSH
// channel) and the program's input, and holds two bounds:
//
//   - Parameters. In any CSI (ESC [, or the one byte 0x9b) or DCS (ESC P,
//     0x90) sequence, after MaxSeparators separators the rest of its
//     parameter bytes is dropped, as a terminal's own parser drops what
//     passes its bound; the sequence's final byte still comes. No real
//     key, mouse report or terminal answer has more than a few.
//     Guard looks for sequences everywhere, even inside a paste, a string
//     or a UTF-8 character that has a 0x9b byte: it may cut a harmless
//     run of 32 ';' after such a byte, never miss one the decoder would
//     take as parameters.
//   - Bracketed pastes (ESC [ 200 ~ ... ESC [ 201 ~). While a paste is open
//     the reader takes every key as pasted text, q, Esc and Ctrl-C
//     included. Guard ends a paste itself (it sends the end marker) when
//     PasteIdle passes without a byte (a terminal sends a paste at once:
//     the end marker that never came was lost or never meant), when a
//     Ctrl-C comes (0x03, or its kitty and modifyOtherKeys forms: the
//     Ctrl-C is then a key again), or when the paste passes MaxPaste bytes:
//     then the rest of it, up to its own end marker, is dropped (never
//     typed as keys), and that too ends at a Ctrl-C or after PasteIdle.
//
// Start with NewReader, which wraps an io.Reader (an SSH channel), or
// NewFile, which wraps the terminal's *os.File and keeps it a file for
// Bubble Tea (raw mode, and reads it can cancel).
package ttyin

import (
	"bytes"
	"time"
)

// MaxSeparators is the most parameter separators Guard lets through in one
// CSI or DCS sequence: x/ansi's decoder has room for 32 parameters.
const MaxSeparators = 31

// MaxPaste is the most bytes of one bracketed paste Guard lets through:
// far more than any answer in learn, and a bound on what one attendee's
// paste holds in the workshop's memory.
const MaxPaste = 256 << 10

// PasteIdle is how long a paste may go without a byte before Guard ends it.
const PasteIdle = time.Second

// The bytes Guard looks at.
const (
	esc   = 0x1b
	csi8  = 0x9b // the one-byte CSI
	dcs8  = 0x90 // the one-byte DCS
	ctrlC = 0x03
)

// pasteEnd is the end marker Guard sends to end a paste.
const pasteEnd = "\x1b[201~"

// maxInject is the most bytes Guard adds to one byte of input: an end
// marker and a Ctrl-C.
const maxInject = len(pasteEnd) + 1

// state is where Guard is in the escape sequences of the input.
type state uint8

const (
	ground state = iota
	escape       // after ESC, and any intermediate bytes
	prefix       // after a CSI or DCS introducer, in its prefix bytes (< = > ?)
	params       // in the parameter bytes (0-9 ; :)
	excess       // past MaxSeparators: parameter bytes are dropped
	inter        // in the intermediate bytes, after the parameters
)

// pasting is where Guard is in a bracketed paste.
type pasting uint8

const (
	notPasting pasting = iota
	open               // in a paste, passing it
	dropping           // past MaxPaste: dropping the rest of it
)

// Guard filters a terminal's input (see the package doc). The zero value
// is not ready: use NewGuard. A Guard is not safe for concurrent use.
type Guard struct {
	now func() time.Time

	st   state
	seps int // separators of the sequence so far
	// The sequence being read, as far as Guard needs it to know the paste
	// markers and Ctrl-C: its prefix byte, intermediate bytes seen, and
	// the first parameter bytes (long enough for "27;5;99").
	dcs   bool // a DCS, not a CSI
	pfx   byte
	inter bool
	par   []byte
	long  bool // more parameter bytes than par keeps

	paste pasting
	size  int       // bytes of the paste let through
	last  time.Time // when the last chunk of a paste came
}

// NewGuard returns a Guard that reads the time from now (time.Now when nil).
func NewGuard(now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{now: now, par: make([]byte, 0, 16)}
}

// Filter appends what Guard lets through of src, the next bytes of the
// input as they came (in one read), to dst and returns it. The result is
// at most MaxOut(len(src)) bytes longer than dst.
func (g *Guard) Filter(dst, src []byte) []byte {
	if len(src) == 0 {
		return dst
	}
	if g.paste != notPasting {
		t := g.now()
		if t.Sub(g.last) > PasteIdle {
			if g.paste == open {
				dst = append(dst, pasteEnd...)
			}
			// Whatever the decoder had of a sequence ended at that end
			// marker; a paste being dropped had sent nothing.
			g.paste, g.st = notPasting, ground
		} else {
			g.last = t
		}
	}
	for _, c := range src {
		dst = g.step(dst, c)
	}
	return dst
}

// MaxOut is the most bytes Filter returns for n bytes of input.
func MaxOut(n int) int { return n*(1+maxInject) + len(pasteEnd) }

// step takes one byte of input and appends what of it goes through.
func (g *Guard) step(dst []byte, c byte) []byte {
	pass := g.paste != dropping
	switch g.st {
	case escape:
		switch {
		case c >= 0x20 && c <= 0x2f: // intermediate bytes
		case c == '[' || c == 'P':
			g.begin(c == 'P')
		default:
			g.st = ground
			return g.step(dst, c)
		}
	case prefix:
		if c >= '<' && c <= '?' {
			g.pfx = c
			break
		}
		g.st = params
		return g.step(dst, c)
	case params, excess:
		switch {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
			if c == ';' || c == ':' {
				g.seps++
				if g.seps > MaxSeparators {
					g.st = excess
				}
			}
			if g.st == excess {
				return dst // dropped: past the decoder's bound
			}
			if len(g.par) < cap(g.par) {
				g.par = append(g.par, c)
			} else {
				g.long = true
			}
		default:
			g.st = inter
			return g.step(dst, c)
		}
	case inter:
		switch {
		case c >= 0x20 && c <= 0x2f:
			g.inter = true
		case c >= 0x40 && c <= 0x7e:
			g.st = ground
			return g.final(dst, c, pass)
		default: // not a sequence after all: the decoder starts again at c
			g.st = ground
			return g.step(dst, c)
		}
	default: // ground
		switch c {
		case esc:
			g.st = escape
		case csi8, dcs8:
			g.begin(c == dcs8)
		case ctrlC:
			if g.paste != notPasting {
				return g.endPaste(dst)
			}
		}
	}
	if pass {
		dst = append(dst, c)
		if g.paste == open {
			g.size++
			if g.size > MaxPaste {
				dst = append(dst, pasteEnd...)
				g.paste = dropping
			}
		}
	}
	return dst
}

// begin starts a CSI or (dcs) a DCS sequence.
func (g *Guard) begin(dcs bool) {
	g.st, g.seps, g.dcs, g.pfx, g.inter, g.par, g.long = prefix, 0, dcs, 0, false, g.par[:0], false
}

// final takes the final byte c of a CSI or DCS sequence: the paste markers
// and Ctrl-C (CSI sequences) are acted on; everything else goes through
// (when pass).
func (g *Guard) final(dst []byte, c byte, pass bool) []byte {
	plain := !g.dcs && g.pfx == 0 && !g.inter && !g.long
	switch {
	case plain && c == '~' && string(g.par) == "200":
		if g.paste == dropping {
			return dst
		}
		g.paste, g.size, g.last = open, 0, g.now()
		return append(dst, c)
	case plain && c == '~' && string(g.par) == "201":
		if g.paste == dropping {
			g.paste = notPasting
			return dst
		}
		g.paste = notPasting
		return append(dst, c)
	case g.paste != notPasting && plain && isCtrlC(g.par, c):
		if pass {
			dst = append(dst, c) // the sequence's start went into the paste
		}
		return g.endPaste(dst)
	}
	if pass {
		dst = append(dst, c)
	}
	return dst
}

// endPaste ends the paste at a Ctrl-C: the end marker (unless the paste
// was being dropped, and so had been ended already), then the Ctrl-C.
func (g *Guard) endPaste(dst []byte) []byte {
	if g.paste == open {
		dst = append(dst, pasteEnd...)
	}
	g.paste = notPasting
	return append(dst, ctrlC)
}

// isCtrlC reports whether a CSI sequence with parameters par and final
// byte final is Ctrl-C: the kitty keyboard protocol's CSI 99;5u (with any
// sub-parameters) or xterm's modifyOtherKeys CSI 27;5;99~.
func isCtrlC(par []byte, final byte) bool {
	fields := bytes.Split(par, []byte(";"))
	first := func(f []byte) string {
		s, _, _ := bytes.Cut(f, []byte(":"))
		return string(s)
	}
	switch final {
	case 'u':
		return len(fields) >= 2 && first(fields[0]) == "99" && first(fields[1]) == "5"
	case '~':
		return len(fields) == 3 && string(fields[0]) == "27" && string(fields[1]) == "5" && string(fields[2]) == "99"
	}
	return false
}
