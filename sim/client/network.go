package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/trace"
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
	// Duplicate delivers the request twice at once; the browser reads the
	// first answer to arrive and never sees the other.
	Duplicate
)

func (f Fault) String() string {
	switch f {
	case Deliver:
		return "deliver"
	case LoseAnswer:
		return "lose answer"
	case FailBeforeSend:
		return "fail before send"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// ErrAnswerLost is the error the browser gets when learn's lossy network
// (LoseAnswer) dropped the answer after the API had acted. It stands in for
// a reset connection: the browser cannot tell whether the API acted.
var ErrAnswerLost = errors.New("learn's lossy network dropped the answer on its way back (it stands in for a connection reset)")

// ErrNotSent is the error the browser gets when the request never left.
var ErrNotSent = errors.New("network unreachable: the request was not sent")

// Network is the lossy network between the browser and the API instances: a
// real http.RoundTripper that applies Plan's fault to each try (read from the
// request context, see WithAttempt) and traces every answer, delivered or
// lost.
type Network struct {
	Base  http.RoundTripper         // the real transport; http.DefaultTransport when nil
	Plan  func(trace.Attempt) Fault // nil delivers everything
	Trace *trace.Trace              //
	// Wire reads the answers it traces; nil is learn's own (LearnWire).
	Wire Wire
}

// Answer is an HTTP answer to POST /bookings as the browser reads it: the
// status and either the booking (200) or the error (any other status).
type Answer struct {
	Status   int
	Booking  *api.BookingJSON
	Replayed bool
	Error    *api.Error
	// RetryAfter is the answer's Retry-After, 0 when it has none (a
	// client's own reading; the wires leave it to the client).
	RetryAfter time.Duration
}

// DecodeAnswer reads an answer: a 200's booking, a replay by its header
// Idempotent-Replayed: true, any other status's problem details. A body
// that is not the API's JSON gives an Answer with only the status.
func DecodeAnswer(status int, header http.Header, body []byte) Answer {
	a := Answer{Status: status}
	if status == http.StatusOK {
		var r api.BookResponse
		if json.Unmarshal(body, &r) == nil && r.Booking.ID != "" {
			a.Booking, a.Replayed = &r.Booking, header.Get(api.HeaderReplayed) == "true"
		}
		return a
	}
	var e api.Error
	if json.Unmarshal(body, &e) == nil && e.Code != "" {
		a.Error = &e
	}
	return a
}

// Caption is the answer in a few words: "200 b1", "200 b1 (replay)",
// "409 Not enough seats left: 0 left, you asked for 2".
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
	at := trace.AttemptFrom(ctx)
	fault := Deliver
	if n.Plan != nil {
		fault = n.Plan(at)
	}
	if fault == FailBeforeSend {
		if err := n.Trace.Emit(ctx, trace.Event{Kind: trace.KindFail, From: trace.LaneBrowser, To: trace.LaneBrowser,
			Lost: true, Label: "not sent", Text: "the request never left the browser: " + ErrNotSent.Error()}); err != nil {
			return nil, err
		}
		return nil, ErrNotSent
	}
	base := n.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if fault == Duplicate {
		return n.duplicate(ctx, base, req, at)
	}
	got, err := roundTrip(base, req)
	if err != nil {
		return nil, err
	}
	if err := n.Trace.Emit(ctx, n.answerEvent(at, got, fault)); err != nil {
		return nil, err
	}
	if fault == LoseAnswer {
		return nil, ErrAnswerLost
	}
	return got.response(req), nil
}

// read is an answer read whole: its status, headers and body.
type read struct {
	status int
	header http.Header
	body   []byte
}

// response is the answer the browser reads, rebuilt from what was read.
func (r read) response(req *http.Request) *http.Response {
	return &http.Response{StatusCode: r.status, Status: http.StatusText(r.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)),
		ContentLength: int64(len(r.body)), Request: req}
}

// roundTrip sends req and reads the whole answer, so the API has finished
// (and committed) whatever the network then does with the answer.
func roundTrip(base http.RoundTripper, req *http.Request) (read, error) {
	resp, err := base.RoundTrip(req)
	if err != nil {
		return read{}, err
	}
	defer resp.Body.Close()
	body, err := ReadAnswer(resp.Body)
	return read{resp.StatusCode, resp.Header, body}, err
}

// duplicate sends two copies of req at once and returns the answer that
// arrives first; the other is traced as dropped.
func (n *Network) duplicate(ctx context.Context, base http.RoundTripper, req *http.Request, at trace.Attempt) (*http.Response, error) {
	var payload []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		payload = b
	}
	type answer struct {
		read
		err error
	}
	answers := make(chan answer, 2)
	for range 2 {
		c := req.Clone(ctx)
		c.Body = io.NopCloser(bytes.NewReader(payload))
		c.ContentLength = int64(len(payload))
		go func() {
			got, err := roundTrip(base, c)
			answers <- answer{got, err}
		}()
	}
	first, second := <-answers, <-answers
	if second.err == nil {
		ev := n.answerEvent(at, second.read, LoseAnswer)
		ev.Label, ev.Text = "duplicate's answer dropped", "the duplicate's answer ("+ev.Text+") is dropped: the browser already has one"
		if err := n.Trace.Emit(ctx, ev); err != nil {
			return nil, err
		}
	}
	if first.err != nil {
		return nil, first.err
	}
	if err := n.Trace.Emit(ctx, n.answerEvent(at, first.read, Deliver)); err != nil {
		return nil, err
	}
	return first.response(req), nil
}

// answerEvent is the trace event of an answer on its way back.
func (n *Network) answerEvent(at trace.Attempt, got read, fault Fault) trace.Event {
	ans := wireOr(n.Wire).Answer(got.status, got.header, got.body)
	ev := trace.Event{Kind: trace.KindAnswer, From: at.Instance, To: trace.LaneBrowser,
		Status: ans.Status, Replayed: ans.Replayed, Label: ans.Caption(), Text: ans.Caption()}
	if ans.Booking != nil {
		ev.BookingID = ans.Booking.ID
	}
	if ans.Error != nil {
		ev.Message = ans.Error.Message
	}
	if fault == LoseAnswer {
		ev.Lost = true
		ev.Label += " lost"
		ev.Text += " — lost on the way back (learn's lossy network drops it, standing in for a connection reset)"
	}
	return ev
}

// The network must satisfy http.RoundTripper.
var _ http.RoundTripper = (*Network)(nil)
