package progress

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goDecoderWords are what Go's decoders say that a learner cannot act on.
// ("json:" and "quiz:" as a prefix, not the end of "progress.json:").
var goDecoderWords = []string{" json:", "(json:", " quiz:", "(quiz:", "unmarshal", "Go value", "map[", "RawMessage"}

// saysGo returns the first of goDecoderWords in s, or "".
func saysGo(s string) string {
	s = " " + s
	for _, w := range goDecoderWords {
		if strings.Contains(s, w) {
			return w
		}
	}
	return ""
}

// A file that is not a progress file is said in words, and the same words
// by the app (Load, which moves it aside) and by `learn progress` (Peek,
// which leaves it): "<path> is not a progress file (<why>)". Before, `[]`
// gave "json: cannot unmarshal array into Go value of type
// map[string]json.RawMessage".
func TestNotAProgressFileIsSaidInWords(t *testing.T) {
	cases := []struct{ content, why string }{
		{"[]", "a JSON array where an object belongs"},
		{"null", "null where an object belongs"},
		{`"progress"`, "a JSON string where an object belongs"},
		{"42", "a number where an object belongs"},
		{"true", "true or false where an object belongs"},
		{`{"version": 2, "read": `, "it breaks off before its JSON ends"},
		{`{"version": 2}}`, "something follows its JSON, at byte 15"},
		{"not json", "it is not JSON: something else at byte 2"},
		{"\uFEFF" + `{"version": 2}`, "it starts with a byte order mark (U+FEFF), which JSON does not allow: an editor saved it so"},
		{`{"version": "one"}`, `its version, "one", is not a whole number`},
		{`{"hello": 1}`, `it has no version, and a key "hello" that no progress file of any version has`},
	}
	for _, c := range cases {
		t.Run(c.content, func(t *testing.T) {
			s := newStore(t)
			writeProgress(t, s, c.content, 0o600)
			want := s.Path + " is not a progress file (" + c.why + ")"
			_, peeked, err := s.Peek()
			if err != nil {
				t.Fatal(err)
			}
			_, loaded := mustLoad(t, s)
			for who, notices := range map[string][]string{"learn progress": peeked, "the app": loaded} {
				if len(notices) != 1 || !strings.HasPrefix(notices[0], want) {
					t.Errorf("%s says %q, want it to begin %q", who, notices, want)
				}
				if len(notices) == 1 {
					if w := saysGo(notices[0]); w != "" {
						t.Errorf("%s says %q: %q is Go's, not the learner's", who, notices[0], w)
					}
				}
			}
		})
	}
	if saysGo("json: cannot unmarshal array into Go value of type map[string]json.RawMessage") == "" {
		t.Error("the old text passes the check")
	}
}

// Errors about the progress file name no package and say the cause once:
// no home directory asks for HOME or XDG_STATE_HOME once each; a directory
// where the file belongs says so, with the path once.
func TestProgressErrorsSayTheCauseOnce(t *testing.T) {
	_, err := defaultPath("linux", func(string) string { return "" }, func() (string, error) { return "", errors.New("$HOME is not defined") })
	if err == nil {
		t.Fatal("no error without a home directory")
	}
	if msg := err.Error(); strings.Count(msg, "XDG_STATE_HOME") != 1 || strings.Count(msg, "HOME") != 2 || saysGo(msg) != "" {
		t.Errorf("no home: %q", msg)
	}
	s := newStore(t)
	if err := os.MkdirAll(s.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	for who, err := range map[string]error{"Load": func() error { _, _, err := s.Load(); return err }(), "Peek": func() error { _, _, err := s.Peek(); return err }()} {
		if err == nil {
			t.Fatalf("%s of a directory: no error", who)
		}
		msg := err.Error()
		if !strings.Contains(msg, "is a directory") || strings.Count(msg, s.Path) != 1 || saysGo(msg) != "" {
			t.Errorf("%s of a directory: %q", who, msg)
		}
	}
}

// An answer to a question its set does not have, and a "next" past the
// last question, are reported and ignored, by the app (which keeps the file
// as it was) and by `learn progress` (which changes nothing) alike; the
// rest is loaded. Before, `learn progress` counted checkpoint/77 as an
// answer and gave no warning.
func TestOutOfRangeEntriesAreReportedAndIgnored(t *testing.T) {
	const file = `{"version": 2, "sets": {"checkpoint": {"next": 999, "answers": {"checkpoint/77": {"score": 1}, "checkpoint/1": {"score": 0.5}}},
		"interview": {"next": -2, "answers": {"nope": {"score": 1}}}, "someday": {"next": 5}}}`
	names := []string{"sets.checkpoint.answers.checkpoint/77", "sets.checkpoint.next (999)", "sets.interview.answers.nope", "sets.interview.next (-2)"}
	s := newStore(t)
	writeProgress(t, s, file, 0o600)
	peeked, peekNotices, err := s.Peek()
	if err != nil {
		t.Fatal(err)
	}
	loaded, loadNotices := mustLoad(t, s)
	for who, r := range map[string]struct {
		p       *Progress
		notices []string
	}{"learn progress": {peeked, peekNotices}, "the app": {loaded, loadNotices}} {
		all := strings.Join(r.notices, "\n")
		for _, n := range names {
			if !strings.Contains(all, n) {
				t.Errorf("%s does not name %s: %q", who, n, r.notices)
			}
		}
		cp := r.p.Sets[setCheckpoint]
		if _, ok := cp.Answers["checkpoint/77"]; ok || cp.Next != 0 || cp.Answers["checkpoint/1"].Score != 0.5 {
			t.Errorf("%s kept %+v", who, cp)
		}
		if iv := r.p.Sets[setInterview]; len(iv.Answers) != 0 || iv.Next != 0 {
			t.Errorf("%s kept %+v", who, iv)
		}
		if r.p.Sets["someday"].Next != 5 {
			t.Errorf("%s changed a set it does not know: %+v", who, r.p.Sets["someday"])
		}
	}
	kept, err := os.ReadFile(s.Path + ".damaged-20260314T150926Z")
	if err != nil || string(kept) != file {
		t.Errorf("the app kept no copy of the file as it was: %q, %v", kept, err)
	}
}

// A set whose last question is answered and whose attempt is not finished
// yet is saved with next = its length (the quiz screen does so): that is no
// damage, nothing is said, and no copy is made.
func TestNextAtTheSetsEndIsNoDamage(t *testing.T) {
	n := len(testKnown()[setCheckpoint])
	file := fmt.Sprintf(`{"version": 2, "sets": {"checkpoint": {"next": %d, "answers": {"checkpoint/1": {"score": 1}}}}}`, n)
	s := newStore(t)
	writeProgress(t, s, file, 0o600)
	p, notices := mustLoad(t, s)
	if len(notices) != 0 || p.Sets[setCheckpoint].Next != n {
		t.Errorf("next = %d of %d questions: notices %q, next now %d", n, n, notices, p.Sets[setCheckpoint].Next)
	}
	if copies, _ := filepath.Glob(s.Path + ".damaged-*"); len(copies) != 0 {
		t.Errorf("a copy was made: %v", copies)
	}
}
