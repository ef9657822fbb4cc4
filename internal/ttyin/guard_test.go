package ttyin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"

	"github.com/learn-idempotency/learn/internal/ttyin/ttyintest"
)

// chunk is one read of a terminal: the bytes, after a pause of the fake
// clock.
type chunk struct {
	after time.Duration
	b     string
}

// chunks is an input that returns one chunk a read and moves the clock.
type chunks struct {
	cs  []chunk
	now *time.Time
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.cs) > 0 && c.cs[0].b == "" {
		*c.now = c.now.Add(c.cs[0].after)
		c.cs = c.cs[1:]
	}
	if len(c.cs) == 0 {
		return 0, io.EOF
	}
	*c.now = c.now.Add(c.cs[0].after)
	n := copy(p, c.cs[0].b)
	if n < len(c.cs[0].b) {
		c.cs[0] = chunk{b: c.cs[0].b[n:]}
	} else {
		c.cs = c.cs[1:]
	}
	return n, nil
}

// decode runs input through ultraviolet's terminal reader, the one Bubble
// Tea reads with, through a Guard when guarded, and returns the events it
// made, or the panic it died of.
func decode(guarded bool, input ...chunk) (events []uv.Event, panicked any) {
	now := time.Unix(1_700_000_000, 0)
	var r io.Reader = &chunks{cs: input, now: &now}
	if guarded {
		r = NewReader(r, func() time.Time { return now })
	}
	defer func() { panicked = recover() }()
	evc := make(chan uv.Event, 1<<16)
	tr := uv.NewTerminalReader(r, "xterm-256color")
	_ = tr.StreamEvents(context.Background(), evc)
	close(evc)
	for e := range evc {
		events = append(events, e)
	}
	return events, nil
}

// in is input that comes in one read.
func in(s string) chunk { return chunk{b: s} }

// describe names events for a failure message and for comparisons.
func describe(evs []uv.Event) string {
	var out []string
	for _, e := range evs {
		switch e := e.(type) {
		case uv.KeyPressEvent:
			out = append(out, "key "+e.String())
		case uv.PasteEvent:
			out = append(out, fmt.Sprintf("paste %d bytes", len(e.Content)))
		case uv.PasteStartEvent, uv.PasteEndEvent:
		default:
			out = append(out, fmt.Sprintf("%T", e))
		}
	}
	return strings.Join(out, ", ")
}

// No sequence a terminal sends, however many parameters it has, panics the
// decoder behind Guard, whether it comes in one read, a byte a read, or
// after other input; and the key typed after it still arrives. Each input
// panics the decoder without Guard: the test can fail.
func TestGuardKeepsSequencesWithinTheDecodersParameters(t *testing.T) {
	for name, seq := range ttyintest.Hostile() {
		t.Run(name, func(t *testing.T) {
			if _, p := decode(false, in(seq+"q")); p == nil {
				t.Fatalf("without Guard %q did not panic the decoder: the test shows nothing", seq)
			}
			var bytewise []chunk
			for i := range len(seq) {
				bytewise = append(bytewise, in(seq[i:i+1]))
			}
			for how, input := range map[string][]chunk{
				"one read":      {in(seq + "q")},
				"a byte a read": append(bytewise, in("q")),
				"after a key":   {in("x" + seq), in("q")},
			} {
				evs, p := decode(true, input...)
				if p != nil {
					t.Fatalf("%s: the decoder panicked behind Guard: %v", how, p)
				}
				if len(evs) == 0 || describe(evs[len(evs)-1:]) != "key q" {
					t.Errorf("%s: q typed after it did not arrive last: %s", how, describe(evs))
				}
			}
		})
	}
}

// What terminals really send goes through Guard unchanged, in one read or
// a byte a read.
func TestGuardPassesWhatTerminalsSend(t *testing.T) {
	inputs := []string{
		"plain text, é, 日本, 🙂",
		"\x1b[A\x1b[B\x1b[1;5C\x1b[3~\x1b[15;2~",  // arrows, ctrl+right, delete, shift+F5
		"\x1b[<0;10;20M\x1b[<0;10;20m",            // SGR mouse
		"\x1b[99;5u\x1b[97;1:3u",                  // kitty keyboard
		"\x1b[27;5;99~",                           // modifyOtherKeys
		"\x1b]11;rgb:0000/0000/0000\x1b\\",        // the background colour
		"\x1b[?62;4;22c",                          // primary device attributes
		"\x1b[?2026;2$y",                          // a mode report
		"\x1bP>|xterm(388)\x1b\\",                 // the terminal's version
		"\x1b[" + strings.Repeat("1;", 31) + "1m", // 32 parameters: the most the decoder holds
		"\x1b[200~a paste\nof two lines\x1b[201~",
		"\xc3\x9b" + strings.Repeat(";", 3), // a UTF-8 character with a 0x9b byte
		"\x1b", "\x1b[", "\x9b",
	}
	for _, s := range inputs {
		g := NewGuard(nil)
		if got := string(g.Filter(nil, []byte(s))); got != s {
			t.Errorf("in one read %q became %q", s, got)
		}
		g = NewGuard(nil)
		var got []byte
		for i := range len(s) {
			got = g.Filter(got, []byte{s[i]})
		}
		if string(got) != s {
			t.Errorf("a byte a read %q became %q", s, got)
		}
	}
}

// A bracketed paste ends, whatever the terminal does: at its end marker,
// after Idle without a byte, at a Ctrl-C in any of its forms, and past
// MaxPaste (the rest of it dropped, never typed as keys). Without Guard the
// key after a paste that never ends is pasted too.
func TestGuardEndsEveryPaste(t *testing.T) {
	big := strings.Repeat("x", MaxPaste+1000)
	cases := []struct {
		name  string
		input []chunk
		want  string
	}{
		{"ended by its marker", []chunk{in("\x1b[200~text\x1b[201~"), in("q")}, "paste 4 bytes, key q"},
		{"never ended, q after a pause", []chunk{in("\x1b[200~text"), {after: Idle + time.Millisecond, b: "q"}}, "paste 4 bytes, key q"},
		{"never ended, Esc after a pause", []chunk{in("\x1b[200~text"), {after: 2 * Idle, b: "\x1b"}}, "paste 4 bytes, key esc"},
		{"never ended, Ctrl-C at once", []chunk{in("\x1b[200~text"), in("\x03")}, "paste 4 bytes, key ctrl+c"},
		{"Ctrl-C in the same read", []chunk{in("\x1b[200~text\x03q")}, "paste 4 bytes, key ctrl+c, key q"},
		{"kitty's Ctrl-C", []chunk{in("\x1b[200~text"), in("\x1b[99;5u")}, "paste 11 bytes, key ctrl+c"},
		{"kitty's Ctrl-C with an event type", []chunk{in("\x1b[200~text"), in("\x1b[99;5:1u")}, "paste 13 bytes, key ctrl+c"},
		{"modifyOtherKeys' Ctrl-C", []chunk{in("\x1b[200~text"), in("\x1b[27;5;99~")}, "paste 14 bytes, key ctrl+c"},
		{"too long, then its marker", []chunk{in("\x1b[200~" + big + "\x1b[201~"), in("q")}, fmt.Sprintf("paste %d bytes, key q", MaxPaste+1)},
		{"too long, never ended, q after a pause", []chunk{in("\x1b[200~" + big), {after: 2 * Idle, b: "q"}}, fmt.Sprintf("paste %d bytes, key q", MaxPaste+1)},
		{"too long, never ended, Ctrl-C", []chunk{in("\x1b[200~" + big), in("\x03")}, fmt.Sprintf("paste %d bytes, key ctrl+c", MaxPaste+1)},
		{"a DCS is no paste marker", []chunk{in("\x1bP200~\x1b\\"), {after: 2 * Idle, b: "q"}}, "uv.UnknownDcsEvent, key q"},
		{"a slow paste within Idle", []chunk{in("\x1b[200~te"), {after: Idle / 2, b: "xt"}, {after: Idle / 2, b: "\x1b[201~q"}}, "paste 4 bytes, key q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, p := decode(true, c.input...)
			if p != nil {
				t.Fatal(p)
			}
			if got := describe(evs); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	t.Run("without Guard", func(t *testing.T) {
		evs, _ := decode(false, in("\x1b[200~text"), chunk{after: 2 * Idle, b: "q\x03"})
		if got := describe(evs); strings.Contains(got, "key") {
			t.Errorf("without Guard the keys after an endless paste arrived (%s): the test shows nothing", got)
		}
	})
}

// The Reader returns everything the Guard lets through in the read that
// brought it, for buffers as small as MaxOut(1), as Bubble Tea reads.
func TestReaderHoldsNothingBack(t *testing.T) {
	src := strings.Repeat("\x1b[200~\x03", 200) + strings.Repeat("é", 300)
	for _, size := range []int{MaxOut(1), 64, 4096} {
		r := NewReader(strings.NewReader(src), nil)
		g := NewGuard(nil)
		want := g.Filter(nil, []byte(src))
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if len(r.pending) > 0 {
				t.Fatalf("buffer of %d: %d bytes held back", size, len(r.pending))
			}
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("buffer of %d: read %q, want %q", size, got, want)
		}
	}
}

// chunked cuts s into reads of size bytes.
func chunked(s string, size int) []chunk {
	var cs []chunk
	for len(s) > 0 {
		k := min(size, len(s))
		cs = append(cs, chunk{b: s[:k]})
		s = s[k:]
	}
	return cs
}

// A sequence or string that goes on and on (1 MiB of it, in reads of 4
// KiB as an SSH channel brings it) reaches the decoder cut to MaxSequence
// or MaxString bytes: ultraviolet's reader keeps an unfinished sequence and
// decodes all of it again at every read, so 4 MiB of an OSC that never
// ended took 11 s, and memory without a bound. What follows the sequence
// (its end, a pause) still arrives as keys. Without the bounds every byte
// went through: the test can fail.
func TestGuardBoundsLongSequencesAndStrings(t *testing.T) {
	mib := strings.Repeat("A", 1<<20)
	digits := strings.Repeat("1", 1<<20)
	cases := []struct {
		name  string
		long  string  // the long sequence, in reads of 4 KiB
		after []chunk // then
		want  string  // the last event
		most  int     // the most of long that goes through
	}{
		{"an OSC that never ends", "\x1b]52;c;" + mib, []chunk{{after: 2 * Idle, b: "q"}}, "key q", MaxString + 16},
		{"an OSC ended by BEL", "\x1b]0;" + mib + "\a", []chunk{in("q")}, "key q", MaxString + 16},
		{"an APC (0x9f) ended by ST", "\x9f" + mib + "\x1b\\", []chunk{in("q")}, "key q", MaxString + 16},
		{"a DCS's data", "\x1bP1$r" + mib + "\x1b\\", []chunk{in("q")}, "key q", MaxString + 16},
		{"an OSC cut, then an arrow key", "\x1b]0;" + mib, []chunk{in("\x1b[A")}, "key up", MaxString + 16},
		{"a CSI's parameters", "\x1b[" + digits + "~", []chunk{in("q")}, "key q", MaxSequence + 16},
		{"a CSI's intermediates", "\x1b[1" + strings.Repeat(" ", 1<<20) + "~", []chunk{in("q")}, "key q", MaxSequence + 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewGuard(nil)
			out := 0
			for _, ch := range chunked(c.long, 4096) {
				out += len(g.Filter(nil, []byte(ch.b)))
			}
			if out > c.most {
				t.Errorf("%d of its %d bytes went through, want at most %d", out, len(c.long), c.most)
			}
			evs, p := decode(true, append(chunked(c.long, 4096), c.after...)...)
			if p != nil {
				t.Fatal(p)
			}
			if len(evs) == 0 || describe(evs[len(evs)-1:]) != c.want {
				t.Errorf("the last event is not %s: %s", c.want, describe(evs))
			}
		})
	}
}

// A DCS sequence is one event behind Guard however many parameters it has:
// ultraviolet's DCS reader keeps 16 parameters and, past them, gave the
// rest of the sequence to the app as keys (so its final byte q quit the
// app), where a CSI's reader keeps 32. Each input leaks keys without
// Guard: the test can fail.
func TestALongDCSNeverLeaksKeys(t *testing.T) {
	for _, n := range []int{16, 17, 31, 40} {
		for intro, end := range map[string]string{"\x1bP": "\x1b\\", "\x90": "\x9c"} {
			seq := intro + strings.Repeat(";", n) + "1q" + end
			name := fmt.Sprintf("%d separators after %q", n, intro)
			if evs, p := decode(false, in(seq)); p == nil && !strings.Contains(describe(evs), "key q") {
				t.Fatalf("%s: without Guard no key leaked (%s) and nothing panicked: the test shows nothing", name, describe(evs))
			}
			evs, p := decode(true, in(seq+"x"))
			if p != nil {
				t.Fatalf("%s: the decoder panicked behind Guard: %v", name, p)
			}
			if got := describe(evs); strings.Contains(got, "key q") || !strings.HasSuffix(got, "key x") {
				t.Errorf("%s: behind Guard the events are %s; want no q, and x last", name, got)
			}
		}
	}
}

// An X10 mouse report after the one-byte CSI (0x9b M and three bytes)
// panicked the decoder behind Guard: ultraviolet reads the report as if
// the CSI were ESC [ (buf[3:6]) and runs past the end. Guard ends such a
// sequence with a final the decoder takes for an unknown key and drops
// the report's three bytes; what follows goes through. (Found by
// TestGuardRandomInput, LEARN_INPUT_SEED=1796177209066523066.)
func TestGuardDropsX10ReportsAfterTheOneByteCSI(t *testing.T) {
	for _, reads := range [][]string{
		{"\x9bM\nc\x1b"},
		{"\x9b", "M\nc", "\x1b"},
		{"\x9bM", "\n", "c\x1b"},
	} {
		var in []chunk
		for _, r := range reads {
			in = append(in, chunk{b: r})
		}
		if _, p := decode(true, in...); p != nil {
			t.Errorf("%q: the decoder panicked behind Guard: %v", reads, p)
		}
	}
	g := NewGuard(func() time.Time { return time.Unix(0, 0) })
	if got := string(g.Filter(nil, []byte("\x9bM !!x\x1b[M !!y"))); got != "\x9b~x\x1b[M !!y" {
		t.Errorf("Guard let %q through, want the one-byte CSI's report dropped and ESC ['s kept", got)
	}
}
