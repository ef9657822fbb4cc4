package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Fault is what the lossy network does to one try.
type Fault int

// The faults.
const (
	// Deliver carries the request and its answer.
	Deliver Fault = iota
	// LoseAnswer carries the request, lets the API finish (and commit), then
	// drops the answer on the way back: the browser sees a network error.
	LoseAnswer
	// FailBeforeSend drops the request before it reaches the API: nothing
	// runs on the server.
	FailBeforeSend
	// DelayAnswer carries both, but holds the answer for Network.Delay.
	DelayAnswer
)

func (f Fault) String() string {
	switch f {
	case Deliver:
		return "deliver"
	case LoseAnswer:
		return "lose answer"
	case FailBeforeSend:
		return "fail before send"
	case DelayAnswer:
		return "delay answer"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// ErrAnswerLost is the error the browser gets when the network dropped the
// answer: like a reset connection, it cannot tell whether the API acted.
var ErrAnswerLost = errors.New("connection reset: the answer was lost on the way back")

// ErrNotSent is the error the browser gets when the request never left.
var ErrNotSent = errors.New("network unreachable: the request was not sent")

// Network is the lossy network between the browser and the API instances: a
// real http.RoundTripper that applies Plan's fault to each try (read from the
// request context, see WithAttempt) and traces every answer, delivered or
// lost.
type Network struct {
	Base  http.RoundTripper   // the real transport; http.DefaultTransport when nil
	Plan  func(Attempt) Fault // nil delivers everything
	Delay time.Duration       // for DelayAnswer
	Clock Clock               // for DelayAnswer
	Trace *Trace              //
}

// Answer is an HTTP answer to POST /bookings as the browser reads it: the
// status and either the booking (200) or the error (any other status).
type Answer struct {
	Status   int
	Booking  *BookingJSON
	Replayed bool
	Error    *Error
}

// DecodeAnswer reads an answer body; a body that is not the API's JSON gives
// an Answer with only the status.
func DecodeAnswer(status int, body []byte) Answer {
	a := Answer{Status: status}
	if status == http.StatusOK {
		var r BookResponse
		if json.Unmarshal(body, &r) == nil && r.Booking.ID != "" {
			a.Booking, a.Replayed = &r.Booking, r.Replayed
		}
		return a
	}
	var e ErrorResponse
	if json.Unmarshal(body, &e) == nil {
		a.Error = e.Error
	}
	return a
}

// Caption is the answer in a few words: "200 b1", "200 b1 (replay)",
// "409 Not enough seats left".
func (a Answer) Caption() string {
	switch {
	case a.Booking != nil && a.Replayed:
		return fmt.Sprintf("%d %s (replay)", a.Status, a.Booking.ID)
	case a.Booking != nil:
		return fmt.Sprintf("%d %s", a.Status, a.Booking.ID)
	case a.Error != nil:
		return fmt.Sprintf("%d %s", a.Status, a.Error.Message)
	}
	return fmt.Sprintf("%d %s", a.Status, http.StatusText(a.Status))
}

// RoundTrip sends req according to the plan for its attempt.
func (n *Network) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	at := AttemptFrom(ctx)
	fault := Deliver
	if n.Plan != nil {
		fault = n.Plan(at)
	}
	if fault == FailBeforeSend {
		if err := n.Trace.Emit(ctx, Event{Kind: KindFail, From: LaneBrowser, To: LaneBrowser, Intent: at.Intent, Try: at.Try,
			Lost: true, Label: "not sent", Text: "the request never left the browser: " + ErrNotSent.Error()}); err != nil {
			return nil, err
		}
		return nil, ErrNotSent
	}
	base := n.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	ans := DecodeAnswer(resp.StatusCode, body)
	ev := Event{Kind: KindAnswer, From: at.Instance, To: LaneBrowser, Intent: at.Intent, Try: at.Try,
		Status: ans.Status, Replayed: ans.Replayed, Label: ans.Caption(), Text: ans.Caption()}
	if ans.Booking != nil {
		ev.BookingID = ans.Booking.ID
	}
	switch fault {
	case LoseAnswer:
		ev.Lost = true
		ev.Label += " lost"
		ev.Text += " — lost on the way back"
		if err := n.Trace.Emit(ctx, ev); err != nil {
			return nil, err
		}
		return nil, ErrAnswerLost
	case DelayAnswer:
		if err := n.Clock.Sleep(ctx, n.Delay); err != nil {
			return nil, err
		}
		ev.Text += fmt.Sprintf(" (held %s by the network)", n.Delay)
	}
	if err := n.Trace.Emit(ctx, ev); err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// The network must satisfy http.RoundTripper.
var _ http.RoundTripper = (*Network)(nil)
