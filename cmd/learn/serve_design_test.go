package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/api/apitest"
	"github.com/learn-idempotency/learn/sim/engine"
)

// freeAddr is a loopback address no one listens on as the test starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// post books body with key at base as ada.
func post(t *testing.T, base, key, body string) (*http.Response, []byte) {
	t.Helper()
	return apitest.Post(t, base, body, "Authorization", "Bearer "+api.TokenAda, api.HeaderIdempotencyKey, key)
}

// learn serve runs a design of the lab on the instances' addresses it is
// given, and says which design: the retry of the last two seats, which the
// lesson's design replays byte for byte with Idempotent-Replayed: true, is
// refused 409 not_enough_seats by lookup=after-seat-check.
func TestServeRunsALabDesign(t *testing.T) {
	bin := buildLearn(t)
	body := `{"event_id": 1, "quantity": 2}`

	lesson := startServe(t, bin, "--addr", "127.0.0.1:0", "--seats", "2")
	if !strings.Contains(lesson.stdout, "learn serve: design: the lesson's\n") {
		t.Errorf("the lesson's design is not said:\n%s", lesson.stdout)
	}
	key := uuid.NewString()
	r1, b1 := post(t, lesson.front, key, body)
	r2, b2 := post(t, lesson.front, key, body)
	if r1.StatusCode != 200 || r1.Header.Get(api.HeaderReplayed) != "" || r2.StatusCode != 200 || r2.Header.Get(api.HeaderReplayed) != "true" || !bytes.Equal(b1, b2) {
		t.Errorf("the lesson's design: %d %q %s then %d %q %s, want 200 and its replay, the same bytes marked %s: true",
			r1.StatusCode, r1.Header.Get(api.HeaderReplayed), b1, r2.StatusCode, r2.Header.Get(api.HeaderReplayed), b2, api.HeaderReplayed)
	}
	if code := lesson.stop(os.Interrupt); code != 0 {
		t.Errorf("learn serve exited %d at Ctrl-C, want 0", code)
	}

	a1, a2 := freeAddr(t), freeAddr(t)
	broken := startServe(t, bin, "--addr", "127.0.0.1:0", "--seats", "2", "--set", "lookup=after-seat-check",
		"--instance-addr", a1, "--instance-addr", a2)
	if !strings.Contains(broken.stdout, "learn serve: design: lookup=after-seat-check, NOT the lesson's") {
		t.Errorf("the design is not said:\n%s", broken.stdout)
	}
	if len(broken.instances) != 2 || broken.instances[0] != "http://"+a1 || broken.instances[1] != "http://"+a2 {
		t.Errorf("instances on %v, want http://%s and http://%s", broken.instances, a1, a2)
	}
	for _, want := range []string{"the lesson's design replays it", "does this one?"} {
		if !strings.Contains(broken.stdout, want) {
			t.Errorf("the intro of a broken design lacks %q (it must not promise the lesson's answers):\n%s", want, broken.stdout)
		}
	}
	if strings.Contains(broken.stdout, "same booking, replayed") {
		t.Errorf("the intro of a broken design promises the lesson's replay:\n%s", broken.stdout)
	}
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
	}
	getJSON(t, broken.front+"/openapi.json", "", &doc)
	if !strings.Contains(doc.Info.Description, "lookup=after-seat-check, NOT the lesson's") {
		t.Errorf("/openapi.json of a broken design does not say so: %.200s", doc.Info.Description)
	}
	key = uuid.NewString()
	if r, b := post(t, broken.instances[0], key, body); r.StatusCode != 200 {
		t.Fatalf("the first booking: %d %s", r.StatusCode, b)
	}
	r, b := post(t, broken.instances[1], key, body)
	e, err := api.ParseProblem(b)
	if r.StatusCode != 409 || r.Header.Get("Content-Type") != api.ContentTypeProblem || err != nil || e.Code != engine.CodeNotEnoughSeats {
		t.Errorf("the retry of the last seats under lookup=after-seat-check: %d %q %s (%v), want 409 %s", r.StatusCode, r.Header.Get("Content-Type"), b, err, engine.CodeNotEnoughSeats)
	}
}
