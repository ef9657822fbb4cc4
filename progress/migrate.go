package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// progressV0 is version 0 of the progress file: the format learn's quiz
// prototype wrote before the schema carried a version. It is kept so that
// such files are upgraded instead of discarded. Its shape:
//
//	{
//	  "read":   ["idempotency"],                       // pages marked read
//	  "scores": {"checkpoint": {"best": 0.8, "last": 0.6, "attempts": 2}},
//	  "cards":  {"followup/redis-ttl": {"due": "…", "interval": 3, "ease": 2.5, "reps": 2}},
//	  "screen": "reader", "page": "idempotency",       // where to resume
//	  "saved":  "2025-11-02T18:04:05Z"
//	}
//
// A file with no "version" key (or "version": 0) is read as version 0;
// unknown keys make it damaged, so that arbitrary JSON is not taken for
// progress.
type progressV0 struct {
	Read   []string `json:"read"`
	Scores map[string]struct {
		Best     float64 `json:"best"`
		Last     float64 `json:"last"`
		Attempts int     `json:"attempts"`
	} `json:"scores"`
	Cards map[string]struct {
		Due      time.Time `json:"due"`
		Interval float64   `json:"interval"`
		Ease     float64   `json:"ease"`
		Reps     int       `json:"reps"`
	} `json:"cards"`
	Screen  string    `json:"screen"`
	Page    string    `json:"page"`
	Saved   time.Time `json:"saved"`
	Version int       `json:"version"`
}

// migrateV0 reads a version 0 file (head is its top-level object) into the
// current schema (its screen is the resume place's page), and returns the values that did not fit and were left
// out. Keys version 0 never had make it an error, so that arbitrary JSON is
// not taken for progress. Version 0 kept no date per page, so pages read
// get the file's "saved" time; it kept no answers per question, so the sets
// have scores but no answers.
func migrateV0(head map[string]json.RawMessage, data []byte) (*Progress, []setAside, error) {
	for k := range head {
		if !slices.ContainsFunc(v0Keys, func(name string) bool { return strings.EqualFold(k, name) }) {
			return nil, nil, fmt.Errorf("it has no version, and a key %q that no progress file of any version has", k)
		}
	}
	var old progressV0
	lost, ok := decodeFields(data, &old)
	if !ok {
		return nil, nil, errors.New("not a JSON object")
	}
	p := NewProgress()
	for _, slug := range old.Read {
		p.MarkRead(slug, old.Saved)
	}
	for id, sc := range old.Scores {
		sp := p.Set(id)
		sp.Best, sp.LastScore, sp.Attempts = clamp01(sc.Best), clamp01(sc.Last), max(sc.Attempts, 0)
	}
	for id, c := range old.Cards {
		p.Drill[id] = Review{Due: c.Due, IntervalDays: c.Interval, Ease: c.Ease, Reps: c.Reps}
	}
	p.Resume = Place{Page: Page(old.Screen), Name: old.Page}
	p.UpdatedAt = old.Saved
	return p, lost, nil
}

// v0Keys are the keys of a version 0 file.
var v0Keys = []string{"read", "scores", "cards", "screen", "page", "saved", "version"}

// resumeV1 is the resume place of version 1, which differs from version
// 2 only there: the page was "screen", and a scenario's variant was its
// "section".
//
//	"resume": {"screen": "play", "name": "lost-answer", "section": "broken"}
//	"resume": {"screen": "reader", "name": "idempotency", "section": "Picture it"}
//
// are, in version 2,
//
//	"resume": {"page": "play", "name": "lost-answer", "variant": "broken"}
//	"resume": {"page": "reader", "name": "idempotency", "section": "Picture it"}
type resumeV1 struct {
	Screen  string `json:"screen"`
	Name    string `json:"name,omitempty"`
	Section string `json:"section,omitempty"`
	Step    int    `json:"step,omitempty"`
}

// migrateV1 rewrites the resume place of a version 1 file in head, its
// top-level object, as version 2 has it (the rest of the file is the same
// in both), and returns the values of the old place that did not fit and
// were left out, as decodeFields would.
func migrateV1(head map[string]json.RawMessage) []setAside {
	key, found := "resume", false
	if _, found = head[key]; !found {
		for k := range head {
			if !found && strings.EqualFold(k, "resume") {
				key, found = k, true
			}
		}
	}
	if !found {
		return nil
	}
	var old resumeV1
	var lost []setAside
	if !decodeInto(head[key], reflect.ValueOf(&old).Elem(), "resume", &lost) {
		delete(head, key) // not an object: left out whole, as version 1 would have
		return lost
	}
	at := Place{Page: Page(old.Screen), Name: old.Name, Section: old.Section, Step: old.Step}
	if at.Page == PagePlay {
		at.Variant, at.Section = old.Section, ""
	}
	head[key], _ = json.Marshal(at) // a struct of strings and an int: no error
	return lost
}
