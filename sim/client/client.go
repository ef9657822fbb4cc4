package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// DefaultBackoff is the browser's retry policy (lesson, "How it works"): at
// most 3 tries, the second after 1 s and the third after 2 s more.
var DefaultBackoff = []time.Duration{1 * time.Second, 2 * time.Second}

// Intent is one decision of a user to book: the event, the quantity and the
// idempotency key made for it. Every retry of the intent sends the same key.
type Intent struct {
	Number   int // 1-based, in the order the scenario made its intents
	Copy     int // 1-based when the intent is sent as several simultaneous copies; 0 otherwise
	EventID  int64
	Quantity int
	Key      uuid.UUID
}

// NewIntent makes an intent with a fresh random (version 4) key, as the
// booking form does when the user decides to book.
func NewIntent(number int, eventID int64, quantity int) Intent {
	return Intent{Number: number, EventID: eventID, Quantity: quantity, Key: uuid.New()}
}

// WithQuantity is the intent after the user changed the quantity: a new
// intent, so a new key.
func (in Intent) WithQuantity(quantity int) Intent {
	return NewIntent(in.Number, in.EventID, quantity)
}

// ShouldRetry is the browser's retry rule (lesson, "How it works"): retry a
// network error (the answer may have been lost after the API acted, and the
// key makes the repeat safe) or a 5xx; never a 4xx or a 2xx, whose answer is
// final, but for a 409 whose code is request_in_progress: the first request
// with the key is still being processed (an API with the lab's
// in-flight=answer-409, or the IETF draft's), and the answer asks to be
// retried with the same key. So the rule reads the error code, not the
// status alone. status and code are ignored when err is non-nil. A
// cancelled context is not a network error.
func ShouldRetry(status int, code string, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return status >= 500 || status == http.StatusConflict && code == engine.CodeInProgress
}

// RetryByStatus is a broken retry rule that reads the status alone:
// network errors and 5xx, as ShouldRetry, but every 4xx is final, the 409
// request_in_progress too, so a booking still being made is shown to the
// user as a refusal.
func RetryByStatus(status int, _ string, err error) bool {
	return ShouldRetry(status, "", err)
}

// TryResult is what one try of an intent got: an HTTP status, or the network
// error when no answer arrived.
type TryResult struct {
	Copy      int    `json:"copy,omitempty"`
	Try       int    `json:"try"`
	Instance  string `json:"instance"`
	Key       string `json:"key,omitempty"` // set when the client changed the key (a broken client)
	Status    int    `json:"status,omitempty"`
	Code      string `json:"code,omitempty"` // the error code of an answer that is not 200, e.g. key_reused
	Error     string `json:"error,omitempty"`
	BookingID string `json:"booking_id,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
	// Answer is the answer the try got, as the browser decoded it; nil
	// when none arrived.
	Answer *Answer `json:"-"`
	// SentAt is when the try left, on the client's own clock from its
	// intent's first try: the waits before it, summed (a try itself takes
	// no time on it). Written in JSON as sent_at_ms.
	SentAt time.Duration `json:"-"`
}

// MarshalJSON writes every field the README names for a try, so a script
// finds them all: booking_id null when the try got no booking (a refusal,
// an error, no answer), as in answers, and replayed false when it was not.
func (t TryResult) MarshalJSON() ([]byte, error) {
	type plain TryResult // without this method
	var id *string
	if t.BookingID != "" {
		id = &t.BookingID
	}
	return json.Marshal(struct {
		plain
		BookingID *string `json:"booking_id"`
		Replayed  bool    `json:"replayed"`
		SentAtMS  int64   `json:"sent_at_ms"`
	}{plain(t), id, t.Replayed, t.SentAt.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, strictly: a field it does
// not write is an error.
func (t *TryResult) UnmarshalJSON(b []byte) error {
	type plain TryResult // without this method
	var v struct {
		plain
		BookingID *string `json:"booking_id"`
		SentAtMS  int64   `json:"sent_at_ms"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*t = TryResult(v.plain)
	if v.BookingID != nil {
		t.BookingID = *v.BookingID
	}
	t.SentAt = time.Duration(v.SentAtMS) * time.Millisecond
	return nil
}

// Outcome is how an intent ended: every try, and the last answer that
// reached the browser (nil when none did).
type Outcome struct {
	Intent Intent
	Token  string // the bearer token the intent was sent with: whose it is
	Tries  []TryResult
	Answer *Answer
	Err    error // the last network error when no answer arrived; ctx.Err() if cancelled
}

// Picker chooses the API instance for each try.
type Picker interface {
	Pick() *api.Instance
}

// Client is the browser side of a booking: it sends POST /bookings with the
// intent's key through HTTP (whose transport is usually a *Network) and
// retries by ShouldRetry, waiting Backoff[i] on Clock before try i+2.
type Client struct {
	Token   string // the demo user's bearer token
	User    string // the user's name, for captions; may be empty
	Picker  Picker
	HTTP    *http.Client
	Clock   clock.Clock
	Trace   *trace.Trace
	Backoff []time.Duration // nil means DefaultBackoff; tries = len(Backoff)+1
	// Jitter adds to each wait of Backoff a random part up to as much
	// again (1–2 s, then 2–4 s, for the lesson's), drawn from a seed of
	// the intent's number and copy, so that a run is the same every time
	// and the clients that failed together retry apart.
	Jitter bool
	// IgnoreRetryAfter makes the client wait its Backoff only; otherwise
	// it waits at least an answer's Retry-After before the retry, up to
	// RetryAfterCap (0: MaxRetryAfter).
	IgnoreRetryAfter bool
	RetryAfterCap    time.Duration

	// Retry decides whether a try is retried, from its status and error
	// code or its network error; nil means ShouldRetry.
	Retry func(status int, code string, err error) bool
	// NewKeyPerTry makes a fresh key for every try: the broken client of
	// "Break it" (a user charged twice for one click).
	NewKeyPerTry bool
	// ReloadAfter, when not 0, reloads the page in the wait after try
	// ReloadAfter: the page drawn again resumes the booking and sends the
	// retry, with the intent's key where the page saved it before the
	// first try was sent, or with a new one (KeyInMemory).
	ReloadAfter int
	// KeyInMemory keeps the intent's key in the page's memory only: a
	// reload loses it, and the page drawn again makes a new one.
	KeyInMemory bool
	// Wire is the API's shape (how a try is written, an answer read);
	// nil is learn's own (LearnWire).
	Wire Wire
	// Meanwhile, when set, runs after each backoff wait and before the next
	// try: what the rest of the world does while this browser waits.
	Meanwhile func(ctx context.Context, at trace.Attempt) error
	// Answered, when set, runs as soon as a try has its answer or its
	// network error, before the client decides whether to retry it; in is
	// the intent as the try sent it (its key).
	Answered func(in Intent, t TryResult)
}

// RetryClientErrors is a broken retry rule that also retries 4xx answers,
// which are final: the same refusal comes back every time.
func RetryClientErrors(status int, code string, err error) bool {
	return ShouldRetry(status, code, err) || (err == nil && status >= 400)
}

// Book sends the intent until it gets a final answer or runs out of tries.
// Every try carries the same Idempotency-Key.
func (c *Client) Book(ctx context.Context, in Intent) Outcome {
	backoff := c.Backoff
	if backoff == nil {
		backoff = DefaultBackoff
	}
	retry := c.Retry
	if retry == nil {
		retry = ShouldRetry
	}
	out := Outcome{Intent: in, Token: c.Token}
	var jitter *rand.Rand
	if c.Jitter {
		jitter = rand.New(rand.NewPCG(uint64(in.Number), uint64(in.Copy)))
	}
	var sentAt time.Duration // on the client's own clock
	start := c.Clock.Now()   // where the client's own clock began
	for try := 1; ; try++ {
		if try > 1 && c.NewKeyPerTry {
			in.Key = uuid.New()
		}
		reloaded := try > 1 && c.ReloadAfter == try-1
		inst := c.Picker.Pick()
		at := trace.Attempt{Intent: in.Number, Copy: in.Copy, Try: try, Instance: inst.Name}
		tctx := trace.WithAttempt(ctx, at)
		who := c.User
		if who == "" {
			who = "browser"
		}
		if reloaded {
			text := "the user reloads the page while it waits to retry: the page drawn again finds the booking's draft (event, quantity, the tries so far and key " + trace.ShortKey(in.Key) + ") in sessionStorage, where the page saved it before sending the first try, and sends it again"
			if c.KeyInMemory {
				old := in.Key
				in.Key = uuid.New()
				text = "the user reloads the page while it waits to retry: the page drawn again finds the booking's draft (event, quantity, the tries so far) in sessionStorage, but not key " + trace.ShortKey(old) + ", which lived in a variable of the page that is gone; it makes a new key, " + trace.ShortKey(in.Key) + ", and sends the booking again"
			}
			if err := c.Trace.Emit(tctx, trace.Event{Kind: trace.KindNote, From: trace.LaneBrowser, To: trace.LaneBrowser,
				Key: in.Key.String(), Label: "the page reloads", Text: text}); err != nil {
				out.Err = err
				return out
			}
		}
		label := fmt.Sprintf("%s: book %d, key %s", who, in.Quantity, trace.ShortKey(in.Key))
		caption := fmt.Sprintf("POST /bookings %s, Idempotency-Key %s", english.Plural(in.Quantity, "seat", ""), in.Key)
		switch {
		case reloaded && c.KeyInMemory:
			label = fmt.Sprintf("%s, reloaded, retries: book %d, NEW key %s", who, in.Quantity, trace.ShortKey(in.Key))
			caption = fmt.Sprintf("retry (try %d of %d) from the reloaded page, with a NEW key: ", try, len(backoff)+1) + caption
		case reloaded:
			label = fmt.Sprintf("%s, reloaded, retries: book %d, key %s", who, in.Quantity, trace.ShortKey(in.Key))
			caption = fmt.Sprintf("retry (try %d of %d) from the reloaded page, with the saved key: ", try, len(backoff)+1) + caption
		case try > 1 && c.NewKeyPerTry:
			label = fmt.Sprintf("%s retries: book %d, NEW key %s", who, in.Quantity, trace.ShortKey(in.Key))
			caption = fmt.Sprintf("retry (try %d of %d) with a NEW key: ", try, len(backoff)+1) + caption
		case try > 1:
			label = fmt.Sprintf("%s retries: book %d, key %s", who, in.Quantity, trace.ShortKey(in.Key))
			caption = fmt.Sprintf("retry (try %d of %d) with the same key: ", try, len(backoff)+1) + caption
		}
		if err := c.Trace.Emit(tctx, trace.Event{Kind: trace.KindSend, From: trace.LaneBrowser, To: inst.Name,
			Key: in.Key.String(), EventID: in.EventID, Label: label, Text: caption}); err != nil {
			out.Err = err
			return out
		}
		ans, err := c.send(tctx, inst, in)
		tr := TryResult{Copy: in.Copy, Try: try, Instance: inst.Name, SentAt: sentAt}
		if c.NewKeyPerTry || in.Key != out.Intent.Key {
			tr.Key = in.Key.String()
		}
		if err != nil {
			tr.Error = err.Error()
			if ue, ok := errors.AsType[*url.Error](err); ok {
				tr.Error = ue.Err.Error() // without "Post <url>:"
			}
			if errors.Is(err, io.EOF) {
				tr.Error = "the connection closed without an answer (EOF)"
			}
			out.Err = err
		} else {
			tr.Status, tr.Answer = ans.Status, &ans
			if ans.Error != nil {
				tr.Code = ans.Error.Code
			}
			if ans.Booking != nil {
				tr.BookingID, tr.Replayed = ans.Booking.ID, ans.Replayed
			}
			out.Answer, out.Err = &ans, nil
		}
		out.Tries = append(out.Tries, tr)
		if c.Answered != nil {
			c.Answered(in, tr)
		}
		if ctx.Err() != nil {
			out.Err = ctx.Err()
			return out
		}
		if !retry(tr.Status, tr.Code, err) {
			return out
		}
		why := "no answer"
		if err == nil {
			why = fmt.Sprintf("%d from the server", ans.Status)
		}
		if try > len(backoff) {
			if err := c.Trace.Emit(tctx, trace.Event{Kind: trace.KindGiveUp, From: trace.LaneBrowser, To: trace.LaneBrowser,
				Key: in.Key.String(), Label: "give up", Text: fmt.Sprintf("%s after %s: give up and tell the user", why, english.Plural(try, "try", ""))}); err != nil {
				out.Err = err
			}
			return out
		}
		d := backoff[try-1]
		if jitter != nil && d > 0 {
			d += time.Duration(jitter.Int64N(int64(d)))
			d = d.Truncate(time.Millisecond)
		}
		if err == nil && !c.IgnoreRetryAfter {
			after := ans.RetryAfter // the server said when
			if c.RetryAfterCap > 0 {
				after = min(after, c.RetryAfterCap)
			}
			d = max(d, after)
		}
		sentAt += d
		if err := c.Trace.Emit(tctx, trace.Event{Kind: trace.KindWait, From: trace.LaneBrowser, To: trace.LaneBrowser,
			Key: in.Key.String(), Delay: d, Label: fmt.Sprintf("wait %s", d), Text: fmt.Sprintf("%s: wait %s, then retry with the same key", why, d)}); err != nil {
			out.Err = err
			return out
		}
		// The wait runs on the client's own timeline: on a fake clock,
		// clients that failed together wake together.
		if err := c.Clock.SleepFrom(ctx, start.Add(sentAt-d), d); err != nil {
			out.Err = err
			return out
		}
		if c.Meanwhile != nil {
			if err := c.Meanwhile(ctx, at); err != nil {
				out.Err = err
				return out
			}
		}
		if now := c.Clock.Now(); now.After(start.Add(sentAt)) {
			// The world's time passed meanwhile (a laptop that slept):
			// the client's own timeline goes on from now.
			start = now.Add(-sentAt)
		}
	}
}

// send makes one HTTP try. A nil error means an answer reached the browser.
func (c *Client) send(ctx context.Context, inst *api.Instance, in Intent) (Answer, error) {
	wire := wireOr(c.Wire)
	req, err := wire.Request(ctx, inst.URL, c.Token, in)
	if err != nil {
		return Answer{}, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := ReadAnswer(resp.Body)
	if err != nil {
		return Answer{}, err
	}
	a := wire.Answer(resp.StatusCode, resp.Header, b)
	a.RetryAfter = retryAfter(resp.Header)
	return a, nil
}

// MaxRetryAfter is the longest Retry-After a client waits for; a longer one
// is waited this long.
const MaxRetryAfter = 60 * time.Second

// retryAfter is an answer's Retry-After in seconds (RFC 9110 10.2.3),
// capped at MaxRetryAfter; 0 when there is none, or it is an HTTP date
// (learn's client retries on its own backoff then).
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n <= 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, MaxRetryAfter)
}

// MaxAnswer is the largest answer body the browser reads: a booking API's
// answers are a few hundred bytes, and one without a bound could take all
// the memory there is.
const MaxAnswer = 4 << 20

// ErrAnswerTooLarge is the error of an answer over MaxAnswer: the browser
// stops reading it, as if the connection had failed.
var ErrAnswerTooLarge = errors.New("the answer is over 4 MiB: the client stopped reading it")

// ReadAnswer reads a whole answer body of at most MaxAnswer bytes.
func ReadAnswer(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxAnswer+1))
	if err == nil && len(b) > MaxAnswer {
		return nil, ErrAnswerTooLarge
	}
	return b, err
}

// BookTogether books intents[i] with clients[i], all released at the same
// instant (each on its own connection when each client has its own
// transport), and returns their outcomes in intent order.
func BookTogether(ctx context.Context, clients []*Client, intents []Intent) []Outcome {
	outs := make([]Outcome, len(intents))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, in := range intents {
		c := clients[i]
		wg.Go(func() {
			<-start
			outs[i] = c.Book(ctx, in)
		})
	}
	close(start)
	wg.Wait()
	return outs
}
