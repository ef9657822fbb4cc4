package serve

import "testing"

// A busy address is answered with the next port to try.
func TestOtherPort(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "127.0.0.1:8081",
		":8080":          "127.0.0.1:8081",
		"[::1]:9000":     "[::1]:9001",
		"127.0.0.1:http": "127.0.0.1:8081",
	} {
		if got := otherPort(in); got != want {
			t.Errorf("otherPort(%q) = %q, want %q", in, got, want)
		}
	}
}
