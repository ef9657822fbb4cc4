package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// ordersWire is the shape of an API that is not learn's: PUT
// /orders/{key} with a form body, a token header of its own, and 201
// {"order": {"ref": …}}.
type ordersWire struct{}

func (ordersWire) Request(ctx context.Context, base, token string, in Intent) (*http.Request, error) {
	form := url.Values{"show": {fmt.Sprint(in.EventID)}, "seats": {fmt.Sprint(in.Quantity)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/orders/"+in.Key.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Token", token)
	return req, nil
}

func (ordersWire) Answer(status int, _ http.Header, body []byte) Answer {
	a := Answer{Status: status}
	var r struct {
		Order struct{ Ref string } `json:"order"`
	}
	if status == http.StatusCreated && json.Unmarshal(body, &r) == nil && r.Order.Ref != "" {
		a.Booking = &api.BookingJSON{ID: r.Order.Ref}
	}
	return a
}

// The client and the lossy network work the same over another API's wire:
// the answer of the first try is lost after the API acted, the retry goes
// out in that API's own shape with the same key, and its answer is read
// by the wire; the network's trace reads the answers by the wire too.
func TestAnotherAPIsWire(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	orders := map[string]string{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		key := strings.TrimPrefix(r.URL.Path, "/orders/")
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Token")+" "+string(b))
		ref, ok := orders[key]
		if !ok {
			ref = fmt.Sprintf("o%d", len(orders)+1)
			orders[key] = ref
		}
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"order": {"ref": %q}}`, ref)
	}))
	defer server.Close()

	tr := trace.New(clock.Real{}, trace.Options{})
	net := &Network{Wire: ordersWire{}, Trace: tr, Plan: func(at trace.Attempt) Fault {
		if at.Try == 1 {
			return LoseAnswer
		}
		return Deliver
	}}
	c := &Client{Token: "t-ada", Wire: ordersWire{}, HTTP: &http.Client{Transport: net}, Clock: clock.NewFake(clock.Real{}.Now()),
		Trace: tr, Picker: &api.RoundRobin{Instances: []*api.Instance{{Name: "orders-1", URL: server.URL}}}}
	in := NewIntent(1, 7, 2)
	out := c.Book(context.Background(), in)

	if out.Answer == nil || out.Answer.Booking == nil || out.Answer.Booking.ID != "o1" || len(out.Tries) != 2 || out.Tries[0].Error == "" {
		t.Fatalf("outcome %+v", out)
	}
	want := "PUT /orders/" + in.Key.String() + " t-ada seats=2&show=7"
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Errorf("the API saw %q, want two of %q", seen, want)
	}
	var answers []string
	for _, ev := range tr.Recorded() {
		if ev.Kind == trace.KindAnswer {
			answers = append(answers, fmt.Sprintf("%d %s lost=%v", ev.Status, ev.BookingID, ev.Lost))
		}
	}
	if strings.Join(answers, "; ") != "201 o1 lost=true; 201 o1 lost=false" {
		t.Errorf("the network traced %q", answers)
	}
}
