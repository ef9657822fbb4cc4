package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/engine"
)

// MaxKeyBytes is the longest Idempotency-Key the API takes, in bytes; a
// longer one is refused with 400 before anything else is read.
const MaxKeyBytes = 255

// parseKey reads the Idempotency-Key of a request. The header is the IETF
// httpapi draft's ("The Idempotency-Key HTTP Header Field"): an Item
// structured field (RFC 8941) whose value is a String, so
// Idempotency-Key: "7d9f2c4e-…" is the same key as the bare
// Idempotency-Key: 7d9f2c4e-… that most clients send; parameters after the
// string are ignored, as RFC 8941 asks. The key itself must be a UUID
// (lesson: one UUID per booking intent).
//
// It returns a 400 invalid_idempotency_key *Error for a missing or empty
// key, more than one Idempotency-Key header line, a quoted value that is
// not a structured-field string, a key over MaxKeyBytes (the message gives
// the limit and never repeats the key), and anything else that is not a
// UUID (the message shows at most the first bytes of it).
func parseKey(h http.Header) (uuid.UUID, *Error) {
	lines := h.Values(HeaderIdempotencyKey)
	if len(lines) > 1 {
		return uuid.Nil, errBadRequest(engine.CodeInvalidKey, fmt.Sprintf(
			"Send one Idempotency-Key header, not %d: one UUID per booking intent, e.g. %s", len(lines), engine.ExampleKey))
	}
	v := ""
	if len(lines) == 1 {
		v = strings.TrimSpace(lines[0])
	}
	if strings.HasPrefix(v, `"`) {
		s, err := sfString(v)
		if err != nil {
			return uuid.Nil, errBadRequest(engine.CodeInvalidKey, fmt.Sprintf(
				`Idempotency-Key %s is not a structured-field string: send one key, bare or quoted ("%s")`, quoteShort(v), engine.ExampleKey))
		}
		v = s
	}
	switch {
	case v == "":
		return uuid.Nil, errBadRequest(engine.CodeInvalidKey, "Missing Idempotency-Key header: make one UUID per booking intent (e.g. "+engine.ExampleKey+") and send it on every retry")
	case len(v) > MaxKeyBytes:
		return uuid.Nil, errBadRequest(engine.CodeInvalidKey, fmt.Sprintf(
			"The Idempotency-Key is %d bytes; the most is %d: send one UUID per booking intent, e.g. %s", len(v), MaxKeyBytes, engine.ExampleKey))
	}
	k, err := uuid.Parse(v)
	if err == nil && len(v) == 36 && k == uuid.Nil {
		// It has the form, but every careless client would send the same
		// one: it cannot tell one intent from another.
		return uuid.Nil, errBadRequest(engine.CodeInvalidKey, fmt.Sprintf(
			"Idempotency-Key %s is the nil UUID, the same for everyone: make a random UUID once per booking intent, e.g. %s", v, engine.ExampleKey))
	}
	if err != nil || len(v) != 36 {
		return uuid.Nil, errBadRequest(engine.CodeInvalidKey, fmt.Sprintf("Idempotency-Key %s is not a UUID in the form %s", quoteShort(v), engine.ExampleKey))
	}
	return k, nil
}

// sfString parses v as an Item structured field whose value is a String.
func sfString(v string) (string, error) {
	item, err := httpsfv.UnmarshalItem([]string{v})
	if err != nil {
		return "", err
	}
	s, ok := item.Value.(string)
	if !ok {
		return "", fmt.Errorf("a %T, not a string", item.Value)
	}
	return s, nil
}

// keyForLog is the Idempotency-Key of h as a log line shows it: the UUID
// when it is one (bare or quoted), else the value quoted and cut to its
// first bytes; "" when there is none.
func keyForLog(h http.Header) string {
	lines := h.Values(HeaderIdempotencyKey)
	if len(lines) == 0 {
		return ""
	}
	if k, refusal := parseKey(h); refusal == nil {
		return k.String()
	}
	return quoteShort(strings.Join(lines, ", "))
}

// shortBytes is how much of a client's value an answer or a log line shows.
const shortBytes = 40

// quoteShort quotes v as Go does, cut to its first shortBytes bytes with
// its length when it is longer: what a client sent is never repeated in
// full.
func quoteShort(v string) string {
	if len(v) <= shortBytes {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q… (%d bytes)", v[:shortBytes], len(v))
}

// cutForLog is v cut to its first shortBytes bytes with its length, when
// it is longer: a path or a request id as a log line shows it.
func cutForLog(v string) string {
	if len(v) <= shortBytes {
		return v
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(v[:shortBytes], ""), len(v))
}

// MaxBodyBytes bounds a request body: 64 KiB, the API's and the front
// door's limit alike; a longer body is answered 413 body_too_large.
const MaxBodyBytes = 64 << 10

// bookBody is the body of POST /bookings.
type bookBody struct {
	EventID  int64
	Quantity int
}

// The fields of bookBody, by their exact names.
const (
	fieldEventID  = "event_id"
	fieldQuantity = "quantity"
)

// bodyExample ends the messages about the body: what to send instead.
const bodyExample = `{"event_id": 1, "quantity": 2}`

// decodeBookBody reads the body of POST /bookings: one JSON object with
// event_id and quantity, each exactly once, by its exact name, each a
// whole number that fits in 64 bits. It returns 415 for a body sent with
// a Content-Encoding other than identity, 413 body_too_large for a
// body over MaxBodyBytes (at once when the Content-Length says so), 408
// request_timeout when the body does not arrive before the listener's
// read limit, and 400 invalid_body, naming the field, for everything
// else: not JSON, not one object, a field that is unknown (user_id among
// them: the user comes from the token), written in other case, or sent
// twice (encoding/json would take the last of two and match names in any
// case), a value that is not a whole number, or one out of range. The
// quantity's own range (1 to MaxQuantity) is the engine's rule:
// engine.Request.Validate.
func decodeBookBody(w http.ResponseWriter, r *http.Request) (bookBody, *Error) {
	var b bookBody
	if ce := strings.TrimSpace(r.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		return b, errBodyEncoding(ce)
	}
	if r.ContentLength > MaxBodyBytes {
		return b, errBodyTooLarge()
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return b, bodyReadError(err)
	}
	bad := func(format string, args ...any) (bookBody, *Error) {
		return b, errBadRequest(CodeInvalidBody, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return bad("The body is empty: send JSON like %s", bodyExample)
	case err != nil:
		return bad("The body must be JSON like %s: %s", bodyExample, syntaxWords(err, data))
	case tok == nil:
		return bad("The body needs both event_id and quantity, like %s", bodyExample)
	case tok != json.Delim('{'):
		return bad("The body must be one JSON object like %s, not %s", bodyExample, jsonKind(tok))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("The body must be JSON like %s: %s", bodyExample, syntaxWords(err, data))
		}
		name := tok.(string) // the decoder checks that an object's keys are strings
		switch {
		case name == fieldEventID || name == fieldQuantity:
		case strings.EqualFold(name, "user_id"):
			return bad("%s is not accepted in the body: the user comes from the Authorization token", quoteShort(name))
		case strings.EqualFold(name, fieldEventID) || strings.EqualFold(name, fieldQuantity):
			return bad("%s is not a field: field names are case-sensitive, did you mean %q? Send %s", quoteShort(name), strings.ToLower(name), bodyExample)
		default:
			return bad("%s is not a field: send only event_id and quantity, like %s", quoteShort(name), bodyExample)
		}
		if seen[name] {
			return bad("%q appears twice in the body: send each field once, like %s", name, bodyExample)
		}
		seen[name] = true
		tok, err = dec.Token()
		if err != nil {
			return bad("The body must be JSON like %s: %s", bodyExample, syntaxWords(err, data))
		}
		n, refusal := wholeNumber(name, tok)
		if refusal != nil {
			return b, refusal
		}
		if name == fieldEventID {
			b.EventID = n
		} else {
			b.Quantity = int(n) // int is 64 bits wherever learn builds
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return bad("The body must be JSON like %s: %s", bodyExample, syntaxWords(err, data))
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("The body must hold one JSON object like %s, and nothing after it", bodyExample)
	}
	if !seen[fieldEventID] || !seen[fieldQuantity] {
		return bad("The body needs both event_id and quantity, like %s", bodyExample)
	}
	return b, nil
}

// syntaxWords says in words what is wrong with body data, which the
// JSON decoder refused with err, instead of the decoder's own text
// ("unexpected EOF", "invalid character 'ï' looking for beginning of
// value").
func syntaxWords(err error, data []byte) string {
	var se *json.SyntaxError
	switch {
	case bytes.HasPrefix(data, []byte("\uFEFF")):
		return "it starts with a byte order mark (U+FEFF); send UTF-8 without one"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "it breaks off before its end"
	case errors.As(err, &se):
		at := min(max(int(se.Offset), 0), len(data)) // the decoder's Token stops before the byte it refuses
		near := []rune(string(data[at:]))
		if len(near) > 12 {
			near = append(near[:12], '…')
		}
		return fmt.Sprintf("it is not valid JSON at byte %d (%s)", at+1, quoteShort(string(near)))
	}
	return "it is not valid JSON"
}

// wholeNumber is the value tok of field as a whole number, or 400
// invalid_body saying what it is instead, or that it is out of range.
func wholeNumber(field string, tok json.Token) (int64, *Error) {
	num, ok := tok.(json.Number)
	if !ok {
		return 0, errBadRequest(CodeInvalidBody, fmt.Sprintf("%s must be a whole number, not %s: send %s", field, jsonKind(tok), bodyExample))
	}
	s := string(num)
	if strings.ContainsAny(s, ".eE") {
		// 1e0 and 2.0 are whole numbers in another notation: say how to
		// write them.
		f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if err != nil || !f.IsInt() {
			return 0, errBadRequest(CodeInvalidBody, fmt.Sprintf("%s %s is not a whole number: send %s", field, cutForLog(s), bodyExample))
		}
		if n, acc := f.Int64(); acc == big.Exact {
			return 0, errBadRequest(CodeInvalidBody, fmt.Sprintf("%s %s must be written without a decimal point or exponent: write it as %d, e.g. %s",
				field, cutForLog(s), n, bodyExample))
		}
		// A whole number past 64 bits: out of range below.
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || (field == fieldEventID && n < 1) { // the decoder has checked the syntax: only the range is left
		what := fmt.Sprintf("it must be a whole number from 1 to %d", engine.MaxQuantity)
		if field == fieldEventID {
			what = eventIDRange
		}
		return 0, errBadRequest(CodeInvalidBody, fmt.Sprintf("%s %s is out of range: %s", field, cutForLog(s), what))
	}
	return n, nil
}

// jsonKind names the kind of a JSON token for a message.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	}
	return fmt.Sprintf("%v", tok)
}

// bodyReadError is the answer to a body that could not be read: over the
// limit (413), not there before the listener's read limit (408), or cut
// short (400).
func bodyReadError(err error) *Error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errBodyTooLarge()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errRequestTimeout()
	}
	return errBadRequest(CodeInvalidBody, fmt.Sprintf("The body could not be read (%v): send it whole, like %s", err, bodyExample))
}
