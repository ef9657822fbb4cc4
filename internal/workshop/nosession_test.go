package workshop

import (
	"errors"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// A port forward in use (ssh -L) is refused with the ssh line that gets a
// session, which OpenSSH prints.
func TestForwardIsRefusedWithTheSSHLine(t *testing.T) {
	w := startWorkshop(t, Config{})
	c, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Dial("tcp", "127.0.0.1:5432")
	var open *gossh.OpenChannelError
	if !errors.As(err, &open) {
		t.Fatalf("a direct-tcpip channel: %v, want it refused", err)
	}
	_, port := dialled(w.Addr())
	want := "learn workshop gives a session only (no port forwarding): ssh " + port + "ada@127.0.0.1"
	if open.Reason != gossh.Prohibited || open.Message != want {
		t.Errorf("refused with %v %q, want %v %q", open.Reason, open.Message, gossh.Prohibited, want)
	}
}

// A connection that gets in and opens no session (ssh -N -L …) is closed
// after the grace, and the presenter's feed says why.
func TestConnectionWithoutASessionIsClosed(t *testing.T) {
	w := startWorkshop(t, Config{noSession: 50 * time.Millisecond})
	c, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan error, 1)
	go func() { closed <- c.Wait() }()
	select {
	case <-closed:
	case <-t.Context().Done():
		t.Fatal("the connection without a session was never closed")
	}
	feedHas(t, w, "ada from 127.0.0.1 opened no session within 50ms (port forwarding only?): closed")
}
