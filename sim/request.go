package sim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/dunglas/httpsfv"
	"github.com/google/uuid"
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
		return uuid.Nil, errBadRequest(CodeInvalidKey, fmt.Sprintf(
			"Send one Idempotency-Key header, not %d: one UUID per booking intent, e.g. %s", len(lines), exampleKey))
	}
	v := ""
	if len(lines) == 1 {
		v = strings.TrimSpace(lines[0])
	}
	if strings.HasPrefix(v, `"`) {
		s, err := sfString(v)
		if err != nil {
			return uuid.Nil, errBadRequest(CodeInvalidKey, fmt.Sprintf(
				`Idempotency-Key %s is not a structured-field string: send one key, bare or quoted ("%s")`, quoteShort(v), exampleKey))
		}
		v = s
	}
	switch {
	case v == "":
		return uuid.Nil, errBadRequest(CodeInvalidKey, "Missing Idempotency-Key header: make one UUID per booking intent (e.g. "+exampleKey+") and send it on every retry")
	case len(v) > MaxKeyBytes:
		return uuid.Nil, errBadRequest(CodeInvalidKey, fmt.Sprintf(
			"The Idempotency-Key is %d bytes; the most is %d: send one UUID per booking intent, e.g. %s", len(v), MaxKeyBytes, exampleKey))
	}
	k, err := uuid.Parse(v)
	if err != nil || len(v) != 36 || k == uuid.Nil {
		return uuid.Nil, errBadRequest(CodeInvalidKey, fmt.Sprintf("Idempotency-Key %s is not a UUID in the form %s", quoteShort(v), exampleKey))
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
