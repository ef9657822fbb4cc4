package workshop

import (
	"fmt"
	"net"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/room"
)

// A connection that asks for anything but a session (ssh -N -L …: port
// forwarding only) gets nothing else, and is told what it can have where
// SSH lets the server say so: a channel of another kind is refused with
// the ssh line to use, which OpenSSH prints ("channel 2: open failed:
// administratively prohibited: …"). A connection that opens no session
// at all would otherwise hang, silent, until the idle timeout: it is
// closed once it has gone noSessionGrace after its authentication without
// one. x/crypto/ssh lets a server send no message of its own when it
// closes a connection (no SSH_MSG_DISCONNECT reason), so the presenter's
// feed says why instead.

// noSessionGrace is how long an authenticated connection may go without
// opening a session: a client opens its session at once.
const noSessionGrace = 10 * time.Second

type connWatchKey struct{}

// connWatch follows one connection until it opens a session.
type connWatch struct {
	conn   net.Conn
	once   sync.Once
	opened chan struct{} // closed once a session channel is opened
	armed  sync.Once

	mu       sync.Mutex
	sessions int // session channels open now (people.go)
	refused  int // session channels refused for too many
}

// watchConn is the server's ConnCallback: it starts following c.
func watchConn(ctx ssh.Context, c net.Conn) net.Conn {
	ctx.SetValue(connWatchKey{}, &connWatch{conn: c, opened: make(chan struct{})})
	return c
}

func watchOf(ctx ssh.Context) *connWatch {
	cw, _ := ctx.Value(connWatchKey{}).(*connWatch)
	return cw
}

// authed starts the wait for a session once the connection of ctx has
// authenticated as conn.User(): past the grace without one, it is closed
// and the feed says so.
func (w *Workshop) authed(ctx ssh.Context, conn gossh.ConnMetadata) {
	cw := watchOf(ctx)
	if cw == nil {
		return
	}
	if gc, ok := cw.conn.(*gated); ok {
		gc.authenticated() // past the join code: the room's limits apply
	}
	grace := noSessionGrace
	if w.cfg.noSession > 0 {
		grace = w.cfg.noSession
	}
	name, from := room.Clean(conn.User()), host(conn.RemoteAddr())
	cw.armed.Do(func() {
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-ctx.Done(): // the connection ended
				return
			case <-cw.opened:
				return
			case <-t.C:
			}
			w.alert("%s from %s opened no session within %s (port forwarding only?): closed", name, from, grace)
			_ = cw.conn.Close()
		}()
	})
}

// sessionChannel is the "session" channel's handler: the connection has
// its session. One over maxSessionsPerConn open at once is refused with a
// line.
func (w *Workshop) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, ch gossh.NewChannel, ctx ssh.Context) {
	if cw := watchOf(ctx); cw != nil {
		cw.once.Do(func() { close(cw.opened) })
		release, ok, refused := cw.openSession()
		if !ok {
			_ = ch.Reject(gossh.Prohibited, tooManySessions)
			if refused == 1 || isPowerOfTen(refused) { // once, then every tenfold: the feed is not flooded
				w.alert("%s from %s asked for more than %d sessions over one connection: refused (%d so far)", room.Clean(conn.User()), host(conn.RemoteAddr()), maxSessionsPerConn, refused)
			}
			return
		}
		defer release()
	}
	ssh.DefaultSessionHandler(srv, conn, ch, ctx)
}

// otherChannel refuses a channel of any other kind (direct-tcpip: a local
// forward in use) with the ssh line that gets a session.
func otherChannel(_ *ssh.Server, conn *gossh.ServerConn, ch gossh.NewChannel, _ ssh.Context) {
	_ = ch.Reject(gossh.Prohibited, sessionOnly(conn.LocalAddr(), conn.User()))
}

// sessionOnly says what learn workshop gives, with the ssh line for user
// who reached it at local.
func sessionOnly(local net.Addr, user string) string {
	h, port := dialled(local)
	return fmt.Sprintf("learn workshop gives a session only (no port forwarding): ssh %s%s@%s", port, room.Clean(user), h)
}
