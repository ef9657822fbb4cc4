package pgtemp

import "github.com/learn-idempotency/learn/pgtemp/internal/way"

// learn watches a server it started (the local and download ways' cluster,
// the Docker way's container): Health says at once when its process exits
// without Close, how and with the end of its log. A local cluster is
// started again on the same data (every answered COMMIT kept), a Docker
// container is not. A server learn did not start (URL mode) is always Up:
// learn has no process of it to watch.

// State says where a server stands after Start: Up, Restarting or Gone.
type State = way.State

// The states of a server learn started.
const (
	Up         = way.Up
	Restarting = way.Restarting
	Gone       = way.Gone
)

// Health is what learn knows of the server it started (see way.Health).
type Health = way.Health

// Health says where the server stands now. Take HealthChanged first, then
// Health, to miss no change.
func (s *Server) Health() Health {
	if w := s.inst.Health; w != nil {
		h, _ := w.Get()
		return h
	}
	return Health{State: Up}
}

// HealthChanged is closed at the next change of Health; nil (never ready)
// for a server learn does not watch.
func (s *Server) HealthChanged() <-chan struct{} {
	if w := s.inst.Health; w != nil {
		_, ch := w.Get()
		return ch
	}
	return nil
}
