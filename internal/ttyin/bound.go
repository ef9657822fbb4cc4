package ttyin

// bound holds the decoder's parameter bound on what Guard lets through:
// it follows the bytes as x/ansi's decoder would from any byte where the
// decoder may start (ultraviolet hands it whatever its buffer holds, from
// wherever that begins), taking every ESC [, ESC P, 0x9b and 0x90 as the
// start of a CSI or DCS sequence, even in a string or a UTF-8 character,
// and drops the parameter bytes after a sequence's MaxSeparators-th
// separator (a DCS's MaxDCSSeparators-th). It over-approximates the decoder's states: it may cut a
// harmless run of separators, never let through one the decoder would take
// as its 33rd parameter. It runs on Guard's output, after every other
// rule, so that nothing Guard drops or adds can join two runs of
// separators.
type bound struct {
	st   state
	seps int
	dcs  bool // the sequence is a DCS: its reader keeps fewer parameters
}

// keep reports whether byte c goes through.
func (b *bound) keep(c byte) bool {
	switch b.st {
	case escape:
		switch {
		case c >= 0x20 && c <= 0x2f: // intermediate bytes
			return true
		case c == '[' || c == 'P':
			b.st, b.seps, b.dcs = prefix, 0, c == 'P'
			return true
		}
		b.st = ground
		return b.keep(c)
	case prefix:
		if c >= '<' && c <= '?' {
			return true
		}
		b.st = params
		return b.keep(c)
	case params, excess:
		if c >= '0' && c <= '9' || c == ';' || c == ':' {
			if c == ';' || c == ':' {
				b.seps++
			}
			if b.seps > MaxSeparators || b.dcs && b.seps > MaxDCSSeparators {
				b.st = excess
			}
			return b.st != excess
		}
		// Intermediates, a final byte or anything else: no parameter
		// byte the decoder takes comes after it.
		b.st = ground
		return b.keep(c)
	}
	switch c {
	case esc:
		b.st = escape
	case csi8, dcs8:
		b.st, b.seps, b.dcs = prefix, 0, c == dcs8
	}
	return true
}
