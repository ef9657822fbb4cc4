package ttyin

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ttyin/ttyintest"
)

// randomInputs is how many random inputs TestGuardRandomInput tries in
// each run (CI runs it with a new seed each time, and says the seed).
const randomInputs = 1000

// checkGuarded holds the contract of Guard on one input, read in the
// given reads: behind it, neither ultraviolet's terminal reader (as Bubble
// Tea reads) nor x/ansi's decoder started at any byte that may start a
// sequence (the reader hands the decoder whatever its buffer holds) panics,
// and input with no byte that starts a sequence or a Ctrl-C goes through
// unchanged.
func checkGuarded(reads [][]byte) error {
	var input []chunk
	for _, r := range reads {
		input = append(input, chunk{b: string(r)})
	}
	if _, p := decode(true, input...); p != nil {
		return fmt.Errorf("the terminal reader panicked behind Guard: %v", p)
	}
	g := NewGuard(func() time.Time { return time.Unix(0, 0) }) // no pause: no paste ends by time
	var out []byte
	for _, r := range reads {
		out = g.Filter(out, r)
	}
	if err := decodeEverywhere(out); err != nil {
		return err
	}
	whole := bytes.Join(reads, nil)
	plain := !slices.ContainsFunc(whole, func(c byte) bool { return c == esc || c == csi8 || c == dcs8 || c == ctrlC })
	if plain && !bytes.Equal(out, whole) {
		return fmt.Errorf("plain input %q became %q", whole, out)
	}
	return nil
}

// decodeEverywhere runs x/ansi's decoder over b from every byte that can
// start a sequence, and returns its panic as an error.
func decodeEverywhere(b []byte) (err error) {
	for i, c := range b {
		if c != 0x1b && c != 0x9b && c != 0x90 {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("x/ansi's decoder panicked from byte %d of %q: %v", i, b, r)
				}
			}()
			p := ansi.GetParser()
			defer ansi.PutParser(p)
			var state byte
			for rest := b[i:]; len(rest) > 0; {
				_, _, n, s := ansi.DecodeSequence(rest, state, p)
				state, rest = s, rest[n:]
			}
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// FuzzGuard holds Guard's contract (checkGuarded) on any bytes, read in
// one read and split in two. The seeds are the hostile sequences and what
// terminals send; go test runs them, go test -fuzz=FuzzGuard explores.
func FuzzGuard(f *testing.F) {
	for _, s := range ttyintest.Hostile() {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	for _, s := range []string{"q", "\x1b[A", "\x1b[<0;10;20M", "\x1b[99;5u", "\x1b]11;rgb:0/0/0\x07",
		"\x1b[200~paste\x1b[201~", "\x1b[200~\x03", "\x9b200~x\x9b201~", "é日🙂"} {
		f.Add([]byte(s), uint16(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		if len(b) > 2048 {
			b = b[:2048] // decodeEverywhere is quadratic
		}
		k := int(cut) % (len(b) + 1)
		if err := checkGuarded([][]byte{b[:k], b[k:]}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestGuardRandomInput holds Guard's contract (checkGuarded) on
// randomInputs random inputs of random bytes and pieces of escape
// sequences, cut into random reads, drawn from a seed it logs.
func TestGuardRandomInput(t *testing.T) {
	seed := ttyintest.Seed(t)
	r := ttyintest.NewRand(seed)
	for i := range randomInputs {
		b := ttyintest.Random(r, 1+r.IntN(600))
		reads := ttyintest.Split(r, b, 1+r.IntN(6))
		if err := checkGuarded(reads); err != nil {
			t.Fatalf("input %d of seed %d (%s=%d): %v\nreads: %q", i, seed, ttyintest.EnvSeed, seed, err, reads)
		}
	}
}
