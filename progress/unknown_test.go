package progress

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// The hostile trial: a field this learn does not know ("future_field", a
// newer learn's, in a file of the same version) was dropped without a word
// on the next save. Now the fields it does not know are written back as
// they were, by every writer (Update after Load, as the app saves) and by
// export, with no notice and no copy, since nothing is lost.
func TestUnknownFieldsAreKept(t *testing.T) {
	const file = `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"},
		"future_field": {"a": 1, "b": [true, null, "x", 2.5e3]}, "another": "text", "zero": 0}`
	want := map[string]any{
		"future_field": map[string]any{"a": 1.0, "b": []any{true, nil, "x", 2500.0}},
		"another":      "text",
		"zero":         0.0,
	}
	s := newStore(t)
	writeProgress(t, s, file, 0o600)
	_, notices := mustLoad(t, s)
	if len(notices) != 0 {
		t.Errorf("Load's notices %q; want none", notices)
	}
	if _, err := s.Update(func(p *Progress) error { p.MarkRead("retries", fixedNow); return nil }); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	var exported bytes.Buffer
	if err := s.Export(&exported); err != nil {
		t.Fatal(err)
	}
	for who, data := range map[string][]byte{"the saved file": saved, "export": exported.Bytes()} {
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%s: %v\n%s", who, err, data)
		}
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s: %q = %#v, want %#v\n%s", who, k, got[k], v, data)
			}
		}
		if read, _ := got["read"].(map[string]any); len(read) != 2 {
			t.Errorf("%s: read = %v, want idempotency and retries", who, got["read"])
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{FileName, FileName + ".lock"}) {
		t.Errorf("the state directory holds %q; want no copy, as nothing was lost", names)
	}
	// Saved twice, the file is the same: the unknown fields do not move
	// or grow.
	if _, err := s.Update(func(*Progress) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(s.Path); !bytes.Equal(again, saved) {
		t.Errorf("saved again:\n%s\nwas\n%s", again, saved)
	}
}
