package api

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/syncbuf"
)

// net/http's own lines (a panic, an accept error) go through the
// server's structured logger, not the standard log package.
func TestListenerLogsThroughSlog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	s := Serve(ln, http.NotFoundHandler(), ServeLimits{}, slog.New(slog.NewTextHandler(&logs, nil)).With("instance", "api-1"))
	t.Cleanup(func() { s.Close() })
	s.srv.ErrorLog.Print("http: Accept error: too many open files")
	if want := `level=WARN msg="http: Accept error: too many open files" instance=api-1`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
}
