package mirrortest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/ulikunitz/xz"
)

// StoredXZ's files are .xz files: the reader the download way uses and
// the xz program give back the very bytes, and a flipped byte is caught
// by the block's check.
func TestStoredXZIsReadByEveryXZReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 1 << 16, 1<<16 + 1, 300_000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.IntN(7)) // compressible, so a compressed chunk would differ
		}
		file := StoredXZ(data)
		r, err := xz.NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatalf("%d bytes: xz.NewReader: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: github.com/ulikunitz/xz read %d bytes (%v), want the %d written", n, len(got), err, n)
		}
		if p, err := exec.LookPath("xz"); err == nil {
			cmd := exec.Command(p, "-dc")
			cmd.Stdin = bytes.NewReader(file)
			got, err := cmd.Output()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes: xz -dc gave %d bytes (%v), want the %d written", n, len(got), err, n)
			}
		}
		if n == 0 {
			continue
		}
		bad := append([]byte(nil), file...)
		bad[len(bad)/2] ^= 0x01 // in the data, as a damaged download is
		r, err = xz.NewReader(bytes.NewReader(bad))
		if err == nil {
			_, err = io.ReadAll(r)
		}
		if err == nil {
			t.Errorf("%d bytes: a flipped byte went unnoticed", n)
		}
	}
}
