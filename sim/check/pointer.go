package check

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pointer is a JSON pointer (RFC 6901) into a document as encoding/json
// decodes it into an any: objects are map[string]any, arrays []any. It
// is the few lines of the RFC that learn check needs (a library for it
// cost the release build more than its size target allowed).
type pointer []string

// parsePointer reads s: "" is the whole document; anything else starts
// with "/", and ~ is only ever ~0 (a ~) or ~1 (a /).
func parsePointer(s string) (pointer, error) {
	if s == "" {
		return pointer{}, nil
	}
	if s[0] != '/' {
		return nil, errors.New(`a JSON pointer is empty or starts with "/"`)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		if strings.Contains(strings.NewReplacer("~0", "", "~1", "").Replace(t), "~") {
			return nil, fmt.Errorf("%q has a ~ that is neither ~0 nor ~1", t)
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// get is the value p points at in doc.
func (p pointer) get(doc any) (any, error) {
	for _, t := range p {
		switch v := doc.(type) {
		case map[string]any:
			x, ok := v[t]
			if !ok {
				return nil, fmt.Errorf("no member %q", t)
			}
			doc = x
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(v) || (len(t) > 1 && t[0] == '0') {
				return nil, fmt.Errorf("no item %q in an array of %d", t, len(v))
			}
			doc = v[i]
		default:
			return nil, fmt.Errorf("no %q: the value there is not an object or an array", t)
		}
	}
	return doc, nil
}
