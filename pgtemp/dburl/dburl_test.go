package dburl

import "testing"

// pgx joins the errors of every connection attempt with newlines; the
// message learn prints is one line, each cause once.
func TestConnectErrorIsOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"hostname resolving error: lookup x on 10.0.0.53:53: no such host\nlookup x on 10.0.0.53:53: no such host": "hostname resolving error: lookup x on 10.0.0.53:53: no such host",
		"h (a): tls error: server refused TLS connection\nh (a): failed to receive message: invalid body length":   "h (a): tls error: server refused TLS connection; h (a): failed to receive message: invalid body length",
		"dial error: connection refused\n\n": "dial error: connection refused",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
