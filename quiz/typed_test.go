package quiz

import (
	"slices"
	"testing"
)

func TestMentions(t *testing.T) {
	cues := []Cue{
		{{"retr", "again"}, {"same", "unchanged"}},
		{{"id "}},
		{{"for update"}},
		{},
	}
	for _, tt := range []struct {
		text string
		want []bool
	}{
		{"It retries", []bool{false, false, false, false}},
		{"RETRIED, and the result was the SAME", []bool{true, false, false, false}},
		{"again... unchanged!", []bool{true, false, false, false}},
		{"sameness retry", []bool{true, false, false, false}}, // entries match at a word's start
		{"a fresh id per intent", []bool{false, true, false, false}},
		{"idempotent", []bool{false, false, false, false}}, // "id " is a whole word
		{"SELECT … FOR  UPDATE", []bool{false, false, true, false}},
		{"unretried", []bool{false, false, false, false}}, // not at a word's start
		{"", []bool{false, false, false, false}},
	} {
		if got := Mentions(tt.text, cues); !slices.Equal(got, tt.want) {
			t.Errorf("Mentions(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// typedQuestion is a question or prompt whose typed answer is checked.
type typedQuestion struct {
	id, model string
	points    []string
	cues      []Cue
	grade     func(typed string, ticked []bool) (Result, error)
}

// typedQuestions are the checkpoint's short answer and the drill's spoken
// prompts.
func typedQuestions(t *testing.T) []typedQuestion {
	t.Helper()
	var out []typedQuestion
	for _, s := range Sets() {
		for _, q := range s.Questions {
			if q.Kind == KindShort {
				out = append(out, typedQuestion{q.ID, q.Model, q.Points, q.Cues,
					func(typed string, ticked []bool) (Result, error) { return GradeShort(q, typed, ticked) }})
			}
		}
	}
	for _, p := range Interview().Prompts {
		out = append(out, typedQuestion{p.ID, p.Model, p.Points, p.Cues,
			func(typed string, ticked []bool) (Result, error) { return GradeSpoken(p, typed, ticked) }})
	}
	if len(out) != 3 {
		t.Fatalf("%d typed questions, want the checkpoint's short answer and the drill's two prompts", len(out))
	}
	return out
}

// Ticking is checked against the text: "It retries" with every point
// ticked scores half, the model answer with every point ticked scores
// 100%, and the model answer itself mentions every one of its points.
func TestTypedAnswersAreCheckedAgainstThePoints(t *testing.T) {
	for _, q := range typedQuestions(t) {
		if len(q.cues) != len(q.points) {
			t.Errorf("%s: %d cues for %d points", q.id, len(q.cues), len(q.points))
			continue
		}
		for i, m := range Mentions(q.model, q.cues) {
			if !m {
				t.Errorf("%s: the model answer does not mention its point %q by the cue %q", q.id, q.points[i], q.cues[i])
			}
		}
		every := slices.Repeat([]bool{true}, len(q.points))
		lazy, err := q.grade("It retries", every)
		if err != nil || lazy.Score >= 1 || lazy.Correct || len(lazy.Unsaid) != len(q.points) {
			t.Errorf("%s: %q with every point ticked scores %+v, %v; want half, every point unsaid", q.id, "It retries", lazy, err)
		}
		model, err := q.grade(q.model, every)
		if err != nil || model.Score != 1 || !model.Correct {
			t.Errorf("%s: the model answer with every point ticked scores %+v, %v", q.id, model, err)
		}
	}
}

// Each cue takes a sentence that makes its point and turns down one that
// only comes near it.
func TestEachCueTakesItsPointAndNotANearMiss(t *testing.T) {
	cases := map[string][][2]string{ // question → per point: makes it, does not
		"checkpoint/1": {
			{"Sending it again changes nothing: the same result as once.", "It retries."},
			{"What counts is the state of the database afterwards.", "The request is sent twice."},
			{"The repeated booking returns the first booking.", "It books again and takes more seats."},
		},
		"interview/idempotency": {
			{"The browser makes a UUID per intent and resends it on every retry.", "The browser makes a UUID for every request."},
			{"A unique constraint on user and key.", "A unique key."},
			{"Lock the event row FOR UPDATE, then look up the key.", "Look up the key first."},
			{"The same key with another payload gets 409.", "The same key gets the same booking."},
			{"Two copies at the same time queue on the row lock.", "Copies are fine."},
			{"The key is in the booking row, so they never disagree.", "The key is kept in Redis."},
		},
		"interview/" + CardSlug: {
			{"One UUID per booking intent, kept on every retry.", "One UUID per request."},
			{"The key sits in the booking row under a unique constraint.", "The key is in a unique place."},
			{"Booking and seats commit in one transaction, so any API instance sees it.", "Booking and seats commit in one transaction."},
			{"A different quantity with that key is refused: 409.", "A different quantity is fine."},
			{"Nothing in process memory, no Redis TTL.", "Keys are stored durably."},
		},
	}
	for _, q := range typedQuestions(t) {
		want, ok := cases[q.id]
		if !ok || len(want) != len(q.cues) {
			t.Errorf("%s: %d cases for %d cues", q.id, len(want), len(q.cues))
			continue
		}
		for i, c := range want {
			if got := Mentions(c[0], q.cues[i:i+1])[0]; !got {
				t.Errorf("%s point %d (%q): %q does not make it", q.id, i+1, q.points[i], c[0])
			}
			if got := Mentions(c[1], q.cues[i:i+1])[0]; got {
				t.Errorf("%s point %d (%q): %q makes it", q.id, i+1, q.points[i], c[1])
			}
		}
	}
}
