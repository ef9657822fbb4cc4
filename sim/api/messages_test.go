package api

import (
	"net/http"
	"strings"
	"testing"
)

// The 408 a slow request gets says what is true of this API and its
// client: nothing was stored; learn's client treats a 4xx as final
// (client.ShouldRetry, whose test holds 408 among the final ones), so it
// does not send it again; a person may send the booking again with the
// same idempotency key. Before, it told the client
// to send it again, which the lesson's client never does for a 4xx.
func TestRequestTimeoutSaysTheClientDoesNotRetryIt(t *testing.T) {
	e := errRequestTimeout()
	if e.Status != http.StatusRequestTimeout || e.Code != CodeRequestTimeout {
		t.Fatalf("errRequestTimeout() = %+v", e)
	}
	for _, want := range []string{"nothing was stored", "learn's client treats a 4xx as final", "send the booking again", "same idempotency key"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the 408 says %q: it does not say %q", e.Message, want)
		}
	}
}
