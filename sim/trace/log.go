package trace

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
)

// LogHandler is a slog.Handler that turns an API instance's log lines
// into KindLog trace events on its lane, for the API log pane. Every level is
// kept, debug included ("replayed for a repeated idempotency key" is debug).
type LogHandler struct {
	Trace *Trace
	Lane  string
	attrs []slog.Attr
}

// Enabled reports true for every level when there is a trace to write to,
// and false without one: a line nobody reads is not even formatted.
func (h *LogHandler) Enabled(context.Context, slog.Level) bool { return h.Trace != nil }

// Handle emits the record as one line: the message, then key=value pairs.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Key == "instance" { // the event's lane says it
			return true
		}
		v := a.Value.String()
		if k, err := uuid.Parse(v); err == nil {
			v = ShortKey(k) // the pane is narrow; the rows show the whole key
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	// A log line never waits for the viewer; a cancelled run drops it.
	_ = h.Trace.Emit(ctx, Event{Kind: KindLog, From: h.Lane, To: h.Lane,
		Level: r.Level.String(), Text: b.String()})
	return nil
}

// WithAttrs returns a handler that adds attrs to every line.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup is not used by learn; groups are flattened.
func (h *LogHandler) WithGroup(string) slog.Handler { return h }
