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
// channel) and the program's input, and holds three bounds:
//
//   - Parameters. In any CSI (ESC [, or the one byte 0x9b) or DCS (ESC P,
//     0x90) sequence, after MaxSeparators separators (a DCS's
//     MaxDCSSeparators) the rest of its parameter bytes is dropped, as a terminal's own parser drops what
//     passes its bound; the sequence's final byte still comes. No real
//     key, mouse report or terminal answer has more than a few.
//     Guard looks for sequences everywhere, even inside a paste, a string
//     or a UTF-8 character that has a 0x9b byte: it may cut a harmless
//     run of 32 ';' after such a byte, never miss one the decoder would
//     take as parameters.
//   - Lengths. ultraviolet keeps an unfinished sequence in its buffer and
//     decodes the whole buffer again at every read: a string that never
//     ends (OSC, APC, PM, SOS, a DCS's data), fed a few bytes a read, cost
//     a session time that grew with the square of its length (4 MiB: 11 s
//     of decoding) and memory without a bound. Guard lets through at most
//     MaxSequence bytes of a CSI or DCS sequence's parameters and
//     intermediates, and MaxString bytes of a string: then it ends the
//     string itself (ST) and drops the rest of it, up to its end (ST,
//     BEL for an OSC, CAN, SUB, or an ESC that starts something else), or
//     until Idle passes without a byte.
//   - Bracketed pastes (ESC [ 200 ~ ... ESC [ 201 ~). While a paste is open
//     the reader takes every key as pasted text, q, Esc and Ctrl-C
//     included. Guard ends a paste itself (it sends the end marker) when
//     Idle passes without a byte (a terminal sends a paste at once:
//     the end marker that never came was lost or never meant), when a
//     Ctrl-C comes (0x03, or its kitty and modifyOtherKeys forms: the
//     Ctrl-C is then a key again), or when the paste passes MaxPaste bytes:
//     then the rest of it, up to its own end marker, is dropped (never
//     typed as keys), and that too ends at a Ctrl-C or after Idle.
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

// MaxDCSSeparators is the most parameter separators Guard lets through in
// one DCS sequence: ultraviolet's DCS reader keeps 16 parameters, and
// past them gave the rest of the sequence to the app as keys.
const MaxDCSSeparators = 15

// MaxSequence is the most bytes of a CSI or DCS sequence's prefix,
// parameters and intermediates Guard lets through; the rest is dropped, the
// final byte still comes. A real one has a few dozen at most.
const MaxSequence = 256

// MaxString is the most bytes of a string sequence's data (OSC, APC, PM,
// SOS, a DCS's data) Guard lets through before it ends the string itself.
// The answers a terminal sends learn (a colour, a version, a mode) have
// well under a hundred; learn asks for no clipboard.
const MaxString = 4096

// MaxPaste is the most bytes of one bracketed paste Guard lets through:
// far more than any answer in learn, and a bound on what one attendee's
// paste holds in the workshop's memory.
const MaxPaste = 256 << 10

// Idle is how long a paste, or an unfinished sequence or string, may go
// without a byte before Guard takes it as over. ultraviolet's reader has
// taken an unfinished sequence as over long before (after 50 ms,
// uv.DefaultEscTimeout), so Guard never counts the parameters of a
// sequence the decoder still reads.
const Idle = time.Second

// The bytes Guard looks at.
const (
	esc   = 0x1b
	csi8  = 0x9b // the one-byte CSI
	dcs8  = 0x90 // the one-byte DCS
	st8   = 0x9c // the one-byte ST, which ends a string
	ctrlC = 0x03
	bel   = 0x07 // ends an OSC string too
	can   = 0x18 // CAN and SUB cancel a sequence
	sub   = 0x1a
)

// strEnd is the string terminator (ST) Guard sends to end a string.
const strEnd = "\x1b\\"

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
	excess       // past a bound: parameter bytes are dropped
	inter        // in the intermediate bytes, after the parameters
	str          // in a string's data
	strEsc       // after an ESC in a string's data: ST, or the string's end
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
	b   bound // the decoder's parameter bound, on Guard's output

	st  state
	n   int  // bytes of the sequence (prefix, parameters, intermediates) or string so far
	osc bool // the string is an OSC's: BEL ends it too
	cut bool // the string passed MaxString: Guard ended it, the rest is dropped
	// The sequence being read, as far as Guard needs it to know the paste
	// markers and Ctrl-C: its prefix byte, intermediate bytes seen, and
	// the first parameter bytes (long enough for "27;5;99").
	dcs   bool // a DCS, not a CSI
	pfx   byte
	inter bool
	par   []byte
	long  bool // more parameter bytes than par keeps
	c1    bool // the CSI came as its one byte, 0x9b
	skip  int  // bytes still to drop: an X10 mouse report's (final)

	paste pasting
	size  int       // bytes of the paste let through
	last  time.Time // when the last read came
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
	t := g.now()
	if t.Sub(g.last) > Idle {
		if g.paste == open {
			dst = append(dst, pasteEnd...)
		}
		// Whatever the decoder had of a sequence it has taken as over.
		g.paste, g.st = notPasting, ground
	}
	g.last = t
	start := len(dst)
	for _, c := range src {
		dst = g.step(dst, c)
	}
	// The decoder's parameter bound, last: on exactly what goes through.
	out := dst[:start]
	for _, c := range dst[start:] {
		if g.b.keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// MaxOut is the most bytes Filter returns for n bytes of input.
func MaxOut(n int) int { return n*(1+maxInject) + len(pasteEnd) }

// step takes one byte of input and appends what of it goes through.
func (g *Guard) step(dst []byte, c byte) []byte {
	if g.skip > 0 {
		g.skip--
		return dst
	}
	pass := g.paste != dropping
	switch g.st {
	case escape:
		switch {
		case c >= 0x20 && c <= 0x2f: // intermediate bytes
		case c == '[' || c == 'P':
			g.begin(c == 'P')
		case c == ']' || c == 'X' || c == '^' || c == '_':
			g.beginString(c == ']')
		default:
			g.st = ground
			return g.step(dst, c)
		}
	case prefix:
		if c >= '<' && c <= '?' {
			g.pfx = c
			if g.n++; g.n > MaxSequence {
				return dst // dropped: past the bound
			}
			break
		}
		g.st = params
		return g.step(dst, c)
	case params, excess:
		switch {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
			if g.n++; g.n > MaxSequence {
				g.st = excess
			}
			if g.st == excess {
				return dst // dropped: past the bound
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
			if g.n++; g.n > MaxSequence {
				return dst // dropped: past the bound
			}
		case c >= 0x40 && c <= 0x7e:
			g.st = ground
			if g.dcs {
				g.beginString(false) // the DCS's data follows
			}
			return g.final(dst, c, pass)
		default: // not a sequence after all: the decoder starts again at c
			g.st = ground
			return g.step(dst, c)
		}
	case str, strEsc:
		return g.inString(dst, c, pass)
	default: // ground
		switch c {
		case esc:
			g.st = escape
		case csi8, dcs8:
			g.begin(c == dcs8)
			g.c1 = c == csi8
		case 0x9d, 0x98, 0x9e, 0x9f: // the one-byte OSC, SOS, PM, APC
			g.beginString(c == 0x9d)
		case ctrlC:
			if g.paste != notPasting {
				return g.endPaste(dst)
			}
		}
	}
	if pass {
		dst = g.put(dst, c)
	}
	return dst
}

// put lets c through, counting it in an open paste: past MaxPaste the
// paste ends (the end marker) and the rest of it is dropped.
func (g *Guard) put(dst []byte, c byte) []byte {
	dst = append(dst, c)
	if g.paste == open {
		g.size++
		if g.size > MaxPaste {
			dst = append(dst, pasteEnd...)
			g.paste = dropping
		}
	}
	return dst
}

// begin starts a CSI or (dcs) a DCS sequence.
func (g *Guard) begin(dcs bool) {
	g.st, g.n, g.dcs, g.pfx, g.inter, g.par, g.long, g.c1 = prefix, 0, dcs, 0, false, g.par[:0], false, false
}

// beginString starts a string's data (osc: an OSC's).
func (g *Guard) beginString(osc bool) {
	g.st, g.n, g.osc, g.cut = str, 0, osc, false
}

// inString takes byte c of a string's data: up to MaxString bytes go
// through, then Guard ends the string (ST) and drops the rest of it. An
// ESC that is not the start of ST ends the string and starts what comes
// next, as in the decoder; past MaxString that ESC goes through only with
// the byte after it, once Guard knows it is no ST.
func (g *Guard) inString(dst []byte, c byte, pass bool) []byte {
	pass = pass && !g.cut
	if g.st == strEsc {
		g.st = ground
		if c == '\\' { // ST: the string's end
			if pass {
				dst = append(dst, c)
			}
			return dst
		}
		if g.cut && g.paste != dropping {
			dst = append(dst, esc) // held back: it was no ST
		}
		g.st = escape // the ESC ended the string and starts a sequence
		return g.step(dst, c)
	}
	switch c {
	case esc:
		g.st = strEsc
		if !pass {
			return dst
		}
	case st8:
		g.st = ground
	case bel:
		if g.osc {
			g.st = ground
		}
	case can, sub: // the string is cancelled; the decoder takes c as a key
		g.st = ground
		return g.step(dst, c)
	default:
		if g.n++; pass && g.n > MaxString {
			g.cut = true
			dst = append(dst, strEnd...)
			return dst
		}
	}
	if pass {
		dst = g.put(dst, c)
	}
	return dst
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
		g.paste, g.size = open, 0
		return append(dst, c)
	case plain && c == '~' && string(g.par) == "201":
		if g.paste == dropping {
			g.paste = notPasting
			return dst
		}
		g.paste = notPasting
		return append(dst, c)
	case plain && c == 'M' && g.c1 && len(g.par) == 0:
		// An X10 mouse report after the one-byte CSI: the decoder reads
		// its three bytes as if the CSI were ESC [ (ultraviolet's
		// parseX10MouseEvent takes buf[3:6]) and panics on the last one.
		// Guard ends the sequence with a final the decoder takes for an
		// unknown key and drops the report's three bytes, as the decoder
		// would have consumed them. learn asks for SGR mouse reports,
		// never X10 ones.
		g.skip = 3
		if pass {
			dst = append(dst, '~')
		}
		return dst
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
