package sim

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
)

// A retry that lands on the other API instance of a real stage gets the
// same booking, and the lines of both instances and the front door all go
// through the one handler of StageConfig.Log (whose mutex writes one line
// at a time), each line whole, while requests run concurrently.
func TestFrontDoorOverAStage(t *testing.T) {
	var logs bytes.Buffer // written by the one handler only, under its mutex
	h := slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})
	st, ev := newStage(t, 100, StageConfig{Instances: 2, Log: h})
	f, err := api.NewFrontDoor(st.Instances, slog.New(h), api.ServeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(f)
	defer front.Close()

	key := uuid.NewString()
	body := fmt.Sprintf(`{"event_id": %d, "quantity": 2}`, ev)
	r1, b1 := post(t, front.URL, key, body)
	r2, b2 := post(t, front.URL, key, body)
	first, ok := readBooked(r1.StatusCode, r1.Header, b1)
	if !ok || first.Replayed {
		t.Fatalf("first try: %d %s", r1.StatusCode, b1)
	}
	if again, ok := readBooked(r2.StatusCode, r2.Header, b2); !ok || !again.Replayed || again.Booking.ID != first.Booking.ID || string(b1) != string(b2) {
		t.Fatalf("retry: %d %s, want a replay of %s", r2.StatusCode, b2, first.Booking.ID)
	}
	if a, b := r1.Header.Get(api.HeaderInstance), r2.Header.Get(api.HeaderInstance); a != "api-1" || b != "api-2" {
		t.Errorf("the tries went to %q and %q, want api-1 then api-2", a, b)
	}

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, err := http.Get(front.URL + "/events")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	front.Close() // every request is answered and logged

	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	count := map[string]int{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") {
			t.Errorf("a torn log line: %q", l)
		}
		for _, who := range []string{"instance=api-1", "instance=api-2", "instance=front-door"} {
			if strings.Contains(l, who) {
				count[who]++
			}
		}
	}
	// Each of the 22 requests: one line of the front door and one of the
	// instance that answered it, plus the replay's debug line.
	if count["instance=front-door"] != 22 || count["instance=api-1"]+count["instance=api-2"] != 23 {
		t.Errorf("log lines per instance %v, want 22 of the front door and 23 of the instances:\n%s", count, logs.String())
	}
	if !strings.Contains(logs.String(), "replayed for a repeated idempotency key") {
		t.Errorf("no replay line at debug level:\n%s", logs.String())
	}
}
