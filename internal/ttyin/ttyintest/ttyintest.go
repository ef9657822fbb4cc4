// Package ttyintest makes hostile terminal input for the tests of learn's
// input path: the sequences that panicked Bubble Tea's input decoder and
// their relatives (Hostile), and random bytes and escape sequences drawn
// from a seed (Random, Seed), the same in every package that fuzzes an
// input (ttyin itself, the app, the workshop's SSH sessions).
package ttyintest

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvSeed is the environment variable that fixes the seed of the random
// inputs; CI sets it and says it, so a failure can be run again.
const EnvSeed = "LEARN_INPUT_SEED"

// Seed is the seed of this run's random inputs: EnvSeed, or the clock's.
// It logs how to run the test again with it.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not a whole number", EnvSeed, s)
		}
		seed = n
	}
	t.Logf("random input seed %d (again: %s=%d go test -run '^%s$')", seed, EnvSeed, seed, t.Name())
	return seed
}

// NewRand is the random source of a seed.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7e1e7e)) }

// Hostile is the sequences with 33 parameters that panicked x/ansi's
// decoder (v0.11.9) in Bubble Tea's input goroutine, and their relatives,
// by name.
func Hostile() map[string]string {
	semis, colons := strings.Repeat(";", 32), strings.Repeat(":", 32)
	return map[string]string{
		"CSI ; (the 36 bytes)":     "\x1b[" + semis + "1~",
		"CSI :":                    "\x1b[" + colons + "1~",
		"CSI ; then :":             "\x1b[" + semis + ":~",
		"CSI ? ... 1u":             "\x1b[?" + semis + "1u",
		"DCS ESC P":                "\x1bP" + semis + "1q" + "data\x1b\\",
		"DCS 0x90":                 "\x90" + semis + "1q" + "data\x1b\\",
		"one-byte CSI 0x9b":        "\x9b" + semis + "1~",
		"CSI after intermediates":  "\x1b#[" + semis + "1~",
		"100 parameters":           "\x1b[" + strings.Repeat("1;", 100) + "1m",
		"in a bracketed paste":     "\x1b[200~pasted " + "\x1b[" + semis + "1~" + " text\x1b[201~",
		"9b in a bracketed paste":  "\x1b[200~" + "\x9b" + semis + "1~" + "\x1b[201~",
		"DCS in a bracketed paste": "\x1b[200~" + "\x1bP" + semis + "1q\x1b\\" + "\x1b[201~",
	}
}

// pieces are what Random strings together: the bytes terminals send and
// the bytes that start, fill and end their sequences.
var pieces = []string{
	"\x1b", "\x1b[", "\x1bP", "\x1b]", "\x1b_", "\x1bO", "\x1b\\", "\x9b", "\x90", "\x9c", "\x9d",
	";", ":", "0", "1", "5", "27", "99", "200", "201", "?", "<", ">", "=", "$", " ", "#",
	"~", "u", "m", "M", "q", "R", "c", "y", "A", "_", "t",
	"\x1b[200~", "\x1b[201~", "\x9b200~", "\x03", "\x1b[99;5u", "\x1b[27;5;99~",
	"\x1b[<0;10;20M", "\x1b[A", "\r", "\n", "\t", "\x7f", "\x00", "\x18", "\x1a", "\x07",
	"a", "é", "日", "🙂", "\xc3", "\x9b\x9b", "\xff",
}

// Random is one random input of at most max bytes: pieces of sequences,
// long runs of separators and digits, random bytes, and now and then one
// of the Hostile sequences.
func Random(r *rand.Rand, max int) []byte {
	var b []byte
	hostile := Hostile()
	names := make([]string, 0, len(hostile))
	for n := range hostile {
		names = append(names, n)
	}
	slices.Sort(names) // the same draw for the same seed
	for len(b) < max {
		switch k := r.IntN(20); {
		case k < 12:
			b = append(b, pieces[r.IntN(len(pieces))]...)
		case k < 15: // a run of separators, maybe with digits
			sep := ";:"[r.IntN(2)]
			for range r.IntN(80) {
				if r.IntN(4) == 0 {
					b = append(b, byte('0'+r.IntN(10)))
				}
				b = append(b, sep)
			}
		case k < 18:
			for range 1 + r.IntN(8) {
				b = append(b, byte(r.IntN(256)))
			}
		default:
			b = append(b, hostile[names[r.IntN(len(names))]]...)
		}
	}
	return b[:max]
}

// Split cuts b into 1 to n reads at random places.
func Split(r *rand.Rand, b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		k := len(b)
		if len(out) < n-1 && len(b) > 1 {
			k = 1 + r.IntN(len(b))
		}
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}
