package serve

import (
	"fmt"
	"net"
	"testing"
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
