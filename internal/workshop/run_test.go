package workshop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/room"
)

// When no directory takes the summary, it is printed as JSON on standard
// error, and the error says so.
func TestSummaryWrittenNowhereIsPrinted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := room.Summary{Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Ended: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)}
	var errOut strings.Builder
	path, err := keepSummary([]string{filepath.Join(file, "a"), filepath.Join(file, "b")}, sum, &errOut)
	if path != "" || err == nil || !strings.Contains(err.Error(), "cannot write the room's summary into "+filepath.Join(file, "a")) {
		t.Errorf("keepSummary: %q, %v; want no path and the first directory's error", path, err)
	}
	// A line says why each directory failed and that the JSON follows;
	// then the JSON, whole.
	head, data, _ := strings.Cut(errOut.String(), "\n")
	for _, d := range []string{"a", "b"} {
		if !strings.Contains(head, "cannot write the room's summary into "+filepath.Join(file, d)) {
			t.Errorf("the line before the JSON does not say why %s failed: %q", d, head)
		}
	}
	if !strings.HasSuffix(head, "here it is as JSON, to save:") {
		t.Errorf("the line before the JSON does not say the JSON follows: %q", head)
	}
	var got room.Summary
	if jerr := json.Unmarshal([]byte(data), &got); jerr != nil || !got.Ended.Equal(sum.Ended) {
		t.Errorf("standard error does not end with the summary as JSON (%v):\n%s", jerr, errOut.String())
	}
}

// When the summary goes to a fallback, the error says why each directory
// before it failed, not only the first.
func TestSummaryFallbackSaysWhyEachDirectoryFailed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := t.TempDir()
	sum := room.Summary{Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Ended: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)}
	var errOut strings.Builder
	path, err := keepSummary([]string{filepath.Join(file, "a"), filepath.Join(file, "b"), ok}, sum, &errOut)
	if filepath.Dir(path) != ok {
		t.Fatalf("keepSummary wrote %q; want a file in %s", path, ok)
	}
	if data, err := os.ReadFile(path); err != nil || !json.Valid(data) {
		t.Errorf("the summary %s: %v\n%s", path, err, data)
	}
	for _, d := range []string{"a", "b"} {
		if err == nil || !strings.Contains(err.Error(), "cannot write the room's summary into "+filepath.Join(file, d)) {
			t.Errorf("keepSummary's error %v does not say why %s failed", err, d)
		}
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("the error is not one line: %q", err)
	}
	if errOut.Len() != 0 {
		t.Errorf("the JSON was printed although a directory took the summary:\n%s", errOut.String())
	}
}
