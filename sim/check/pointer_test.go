package check

import (
	"encoding/json"
	"testing"
)

// The examples of RFC 6901 §5, each pointing at its value, and pointers
// that point at nothing or do not parse.
func TestPointerReadsRFC6901sExamples(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}`), &doc); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/foo": `["bar","baz"]`, "/foo/0": `"bar"`, "/": "0", "/a~1b": "1", "/c%d": "2", "/e^f": "3",
		"/g|h": "4", "/i\\j": "5", "/k\"l": "6", "/ ": "7", "/m~0n": "8",
	} {
		ptr, err := parsePointer(p)
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		v, err := ptr.get(doc)
		got, _ := json.Marshal(v)
		if err != nil || string(got) != want {
			t.Errorf("%q: %s (%v), want %s", p, got, err, want)
		}
	}
	if ptr, err := parsePointer(""); err != nil || len(ptr) != 0 {
		t.Errorf(`"" is the whole document: %v %v`, ptr, err)
	}
	for _, p := range []string{"foo", "/m~2n", "/~"} {
		if _, err := parsePointer(p); err == nil {
			t.Errorf("%q parsed", p)
		}
	}
	for _, p := range []string{"/foo/2", "/foo/01", "/foo/-1", "/nope", "/foo/0/x"} {
		ptr, _ := parsePointer(p)
		if v, err := ptr.get(doc); err == nil {
			t.Errorf("%q points at %v", p, v)
		}
	}
}
