package flagval

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Every refusal is an *Error in words that say what to pass, and leaves
// the value as it was.
func TestRefusalsSayWhatToPass(t *testing.T) {
	var s, mode, addr string
	var n int
	var d time.Duration
	mode = "auto"
	for _, tt := range []struct {
		v    interface{ Set(string) error }
		in   string
		want string
	}{
		{NewEnum(&s, "theme", "dark", "dark", "light"), "blue", `--theme "blue": use dark or light`},
		{NewMode(&mode), "podman", "--postgres: "},
		{NewRange(&n, "copies", 10, 2, 100), "500", "--copies must be from 2 to 100, got 500"},
		{NewRange(&n, "copies", 10, 2, 100), "ten", `--copies must be a whole number from 2 to 100, got "ten"`},
		{NewAddr(&addr, "addr", "127.0.0.1:8080", "e.g. 127.0.0.1:8080"), "127.0.0.1:99999", `--addr "127.0.0.1:99999" is not host:port with a port from 0 to 65535 (e.g. 127.0.0.1:8080)`},
		{NewDuration(&d, "idle", time.Minute, time.Second), "1ms", "--idle must be at least 1s, got 1ms"},
	} {
		err := tt.v.Set(tt.in)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("Set(%q) = %v, want an *Error", tt.in, err)
			continue
		}
		if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
			t.Errorf("Set(%q) = %q, want it to start %q", tt.in, got, tt.want)
		}
	}
	if s != "dark" || mode != "auto" || n != 10 || addr != "127.0.0.1:8080" || d != time.Minute {
		t.Errorf("a refused value changed the flag: %q %q %d %q %s", s, mode, n, addr, d)
	}
}

func TestOrList(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		words := strings.Fields(in)
		if got := OrList(words); got != want {
			t.Errorf("OrList(%q) = %q, want %q", words, got, want)
		}
	}
}
