package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file written by learn's version 1 (testdata/progress-v1.json was saved
// by that learn's own Store, with a scenario's broken variant as the place
// to resume) loads with the same place and everything else as it was: the
// app upgrades it to CurrentVersion and keeps the original as .v1, says so
// once, and the next load is silent; learn progress shows it upgraded and
// changes nothing.
func TestStoreUpgradesVersion1(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "progress-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t)
	writeProgress(t, s, string(fixture), 0o600)
	at := time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)
	check := func(who string, p *Progress) {
		t.Helper()
		if want := (Place{Page: PagePlay, Name: "lost-answer", Variant: "broken"}); p.Resume != want {
			t.Errorf("%s: resume %+v, want %+v", who, p.Resume, want)
		}
		cp := p.Sets[setCheckpoint]
		if !p.Read["idempotency"].Equal(at) || cp == nil || cp.Best != 0.75 || cp.Attempts != 1 || cp.Answers["checkpoint/2"].Score != 0.5 ||
			p.Drill["followup/redis-ttl"].Reps != 1 || p.DrillSeconds != 45 || !p.Challenges["lab/last-seats"].Equal(at) {
			t.Errorf("%s: %s", who, jsonOf(t, p))
		}
	}

	peeked, notices, err := s.Peek()
	if err != nil || len(notices) != 1 || !strings.Contains(notices[0], "older format (version 1)") {
		t.Fatalf("Peek: %v, notices %q", err, notices)
	}
	check("Peek", peeked)
	if !peeked.UpdatedAt.Equal(at.Add(time.Hour)) {
		t.Errorf("Peek: updated_at %v, want the file's", peeked.UpdatedAt)
	}
	if now, _ := os.ReadFile(s.Path); !bytes.Equal(now, fixture) {
		t.Errorf("Peek changed the file")
	}

	p, notices := mustLoad(t, s)
	if len(notices) != 1 || !strings.Contains(notices[0], "older format (version 1)") || !strings.Contains(notices[0], FileName+".v1") {
		t.Fatalf("Load: notices %q", notices)
	}
	check("Load", p)
	if kept, err := os.ReadFile(s.Path + ".v1"); err != nil || !bytes.Equal(kept, fixture) {
		t.Errorf("the version 1 original was not kept: %v", err)
	}
	saved, _ := os.ReadFile(s.Path)
	for _, want := range []string{`"version": 2`, `"page": "play"`, `"variant": "broken"`} {
		if !bytes.Contains(saved, []byte(want)) {
			t.Errorf("the upgraded file lacks %s:\n%s", want, saved)
		}
	}
	if bytes.Contains(saved, []byte(`"screen"`)) || bytes.Contains(saved, []byte(`"section"`)) {
		t.Errorf("the upgraded file keeps version 1's words:\n%s", saved)
	}
	again, notices := mustLoad(t, s)
	if len(notices) != 0 {
		t.Errorf("second load: notices %q", notices)
	}
	check("the second load", again)
}

// Every place version 1 saved becomes the same place: the page was its
// "screen", a scenario's variant its "section"; what does not fit is left
// out and said, as in any file, and costs the rest nothing.
func TestVersion1PlacesMigrate(t *testing.T) {
	cases := []struct {
		name, resume string
		want         Place
		lost         string // the values left out, as a notice names them
	}{
		{"a scenario, broken", `{"screen": "play", "name": "lost-answer", "section": "broken"}`, Place{Page: PagePlay, Name: "lost-answer", Variant: "broken"}, ""},
		{"a scenario, correct", `{"screen": "play", "name": "other-instance", "section": "correct"}`, Place{Page: PagePlay, Name: "other-instance", Variant: "correct"}, ""},
		{"a lesson's section", `{"screen": "reader", "name": "idempotency", "section": "Picture it"}`, Place{Page: PageReader, Name: "idempotency", Section: "Picture it"}, ""},
		{"a question", `{"screen": "quiz", "name": "checkpoint", "step": 2}`, Place{Page: PageQuiz, Name: "checkpoint", Step: 2}, ""},
		{"the drill's flashcards", `{"screen": "drill", "step": 2}`, Place{Page: PageDrill, Step: 2}, ""},
		{"nowhere", `{"screen": ""}`, Place{}, ""},
		{"null", `null`, Place{}, ""},
		{"names in another case", `{"Screen": "play", "Name": "lost-answer", "Section": "broken"}`, Place{Page: PagePlay, Name: "lost-answer", Variant: "broken"}, ""},
		{"a field of the wrong type", `{"screen": "quiz", "name": "checkpoint", "step": "two"}`, Place{Page: PageQuiz, Name: "checkpoint"}, `resume.step ("two")`},
		{"not an object", `5`, Place{}, "resume (5)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := `{"version": 1, "read": {"idempotency": "2026-03-01T10:00:00Z"}, "resume": ` + c.resume + `}`
			p, from, lost, err := decode([]byte(file), testKnown())
			if err != nil || from != 1 {
				t.Fatalf("decode: version %d, %v", from, err)
			}
			if p.Resume != c.want {
				t.Errorf("resume %+v, want %+v", p.Resume, c.want)
			}
			if got := asideList(lost); got != c.lost {
				t.Errorf("left out %q, want %q", got, c.lost)
			}
			if !p.IsRead("idempotency") {
				t.Errorf("the rest was not read: %s", jsonOf(t, p))
			}
		})
	}
	// Version 2 files are read as they are: "section" is a section, even
	// on a play page (a hand edit), and "screen" is no field of theirs.
	p, _, _, err := decode([]byte(`{"version": 2, "resume": {"page": "play", "name": "lost-answer", "section": "broken", "screen": "quiz"}}`), testKnown())
	if err != nil || p.Resume != (Place{Page: PagePlay, Name: "lost-answer", Section: "broken"}) {
		t.Errorf("a version 2 place: %+v, %v", p.Resume, err)
	}
}
