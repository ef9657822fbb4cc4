package serve

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
)

// A busy address is answered with the next port to try: free, and none
// of the command's own instance addresses.
func TestOtherPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	var p int
	fmt.Sscan(port, &p)
	own := fmt.Sprintf("127.0.0.1:%d", p+1)
	// p is busy, p+1 is the command's own instance: p+2, if free.
	if got, want := otherPort(busy.Addr().String(), own), fmt.Sprintf("127.0.0.1:%d", p+2); got != want {
		if l, err := net.Listen("tcp", want); err == nil { // p+2 was free, so the answer is wrong
			l.Close()
			t.Errorf("otherPort(%s, %s) = %s, want %s", busy.Addr(), own, got, want)
		}
	}
	// No host is loopback's.
	if got, _, _ := net.SplitHostPort(otherPort(":" + port)); got != "127.0.0.1" {
		t.Errorf("otherPort(:%s) is on host %q, want 127.0.0.1", port, got)
	}
}

// The intro says of a design whether it runs as the lesson's: a switch
// that acts on nothing (on-40001 at READ COMMITTED) is no practice target,
// and a design other than the lesson's is not called unsafe (the lab says
// whether it is).
func TestTheIntroSaysWhatTheDesignRuns(t *testing.T) {
	for _, tt := range []struct {
		set, want, not string
	}{
		{"on-40001=answer-500", "design: on-40001=answer-500, which runs as the lesson's:\nlearn serve: on-40001 acts on nothing here: isolation=read-committed", "NOT the lesson's"},
		{"isolation=serializable", "design: isolation=serializable, NOT the lesson's: a practice target (learn lab --set … says which scenarios it fails, if any)", "unsafe"},
		{"expiry=24h", "design: expiry=24h, NOT the lesson's: a practice target (learn lab --set … says which scenarios it fails, if any)\nlearn serve: keys expire: every 1m the key sweeper removes from their booking rows the keys older than 24h (the bookings stay; a retry after that books again)", "0s"},
	} {
		var cfg Config
		if err := SwitchesDesign(&cfg, []string{tt.set}); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		printIntro(&b, intro{design: cfg.DesignName, broken: len(cfg.Design.Changed()) > 0, asLessons: cfg.Design.Effective() == sim.Switches{},
			notApplying: cfg.Design.NotApplying(), front: "http://127.0.0.1:1", instances: []*api.Instance{{Name: "api-1", URL: "http://127.0.0.1:2"}},
			keyExpiry: cfg.Design.Expiry.Duration()})
		if !strings.Contains(b.String(), tt.want) || strings.Contains(b.String(), tt.not) {
			t.Errorf("--set %s:\n%s\nwant %q, and no %q", tt.set, b.String(), tt.want, tt.not)
		}
	}
}
