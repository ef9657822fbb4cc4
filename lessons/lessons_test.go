package lessons

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// mustGet loads a page or stops the test.
func mustGet(t *testing.T, slug string) *Page {
	t.Helper()
	p, err := Get(slug)
	if err != nil {
		t.Fatalf("Get(%q): %v", slug, err)
	}
	return p
}

func TestEmbeddedPagesLoad(t *testing.T) {
	pages, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, p := range pages {
		got = append(got, p.Slug+"/"+string(p.Kind))
	}
	want := []string{"idempotency/lesson", "retry-across-instances/interview"}
	if !slices.Equal(got, want) {
		t.Fatalf("pages = %v, want %v (lesson first)", got, want)
	}
	if all := All(); len(all) != 2 || all[0] != pages[0] || all[1] != pages[1] {
		t.Fatalf("All() = %v, want the pages of Load", all)
	}
}

func TestTitles(t *testing.T) {
	tests := []struct{ slug, title string }{
		{"idempotency", "Idempotency"},
		{"retry-across-instances", "How do you make a booking retry safe across API instances?"},
	}
	for _, tt := range tests {
		if got := mustGet(t, tt.slug).Title; got != tt.title {
			t.Errorf("%s: Title = %q, want %q", tt.slug, got, tt.title)
		}
	}
}

func TestSectionOrder(t *testing.T) {
	tests := []struct {
		slug string
		want []string
	}{
		{"idempotency", []string{
			"In 1 minute", "Picture it", "How it works", "Break it", "Say it in an interview",
			"Follow-ups", "Advanced: where the logic lives", "Checkpoint", "Redraw it", "Try this",
		}},
		{"retry-across-instances", []string{
			"Say it in 30 seconds", "The deeper answer", "Counter-questions", "Where in learn",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.slug, func(t *testing.T) {
			p := mustGet(t, tt.slug)
			var got []string
			for _, s := range p.Sections {
				got = append(got, s.Title)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("sections = %q\nwant %q", got, tt.want)
			}
			lines := strings.Split(p.Markdown, "\n")
			if !strings.HasPrefix(lines[0], "# ") {
				t.Errorf("Markdown line 0 = %q, want the # title (no front matter)", lines[0])
			}
			for _, s := range p.Sections {
				if lines[s.Line] != "## "+s.Title {
					t.Errorf("section %q: Markdown line %d = %q", s.Title, s.Line, lines[s.Line])
				}
				if s.Markdown == "" || strings.HasPrefix(s.Markdown, "## ") {
					t.Errorf("section %q: body %q should be non-empty and without its heading", s.Title, s.Markdown)
				}
			}
		})
	}
}

func TestSectionLookup(t *testing.T) {
	p := mustGet(t, "idempotency")
	tests := []struct {
		title, anchor string
		ok            bool
	}{
		{"How it works", "how-it-works", true},
		{"  how IT works ", "how-it-works", true},
		{"Advanced: where the logic lives", "advanced-where-the-logic-lives", true},
		{"In 1 minute", "in-1-minute", true},
		{"See it in learn", "", false}, // a ### subsection, not a section
		{"", "", false},
	}
	for _, tt := range tests {
		s, ok := p.Section(tt.title)
		if ok != tt.ok || s.Anchor != tt.anchor {
			t.Errorf("Section(%q) = %q, %v; want anchor %q, %v", tt.title, s.Anchor, ok, tt.anchor, tt.ok)
		}
	}
	how, _ := p.Section("How it works")
	if !strings.Contains(how.Markdown, "### See it in learn") || !strings.Contains(how.Markdown, "learn serve 2>&1 | grep replayed") {
		t.Errorf("How it works should hold the See it in learn subsection with its fenced command")
	}
}

func TestCheckpoint(t *testing.T) {
	p := mustGet(t, "idempotency")
	want := [][]string{ // words each question must contain, in order
		{"one sentence", "idempotent"},
		{"fresh key", "again"},
		{"same key", "different quantity"},
		{"same instant", "decides"},
		{"only write", "retries on its own"},
	}
	if len(p.Checkpoint) != len(want) {
		t.Fatalf("%d checkpoint questions, want %d: %q", len(p.Checkpoint), len(want), p.Checkpoint)
	}
	for i, words := range want {
		q := p.Checkpoint[i]
		if !strings.HasSuffix(q, "?") {
			t.Errorf("question %d %q is not a question", i+1, q)
		}
		for _, w := range words {
			if !strings.Contains(q, w) {
				t.Errorf("question %d %q does not mention %q", i+1, q, w)
			}
		}
	}
	if card := mustGet(t, "retry-across-instances"); card.Checkpoint != nil || card.BreakIt != nil || card.Sequence != nil {
		t.Errorf("interview card has lesson-only parts: %+v", card)
	}
}

func TestBreakIt(t *testing.T) {
	p := mustGet(t, "idempotency")
	want := []struct{ symptom, cause, where string }{
		{"charges, the user twice", "fresh key for each retry", "sim/client/client.go"},
		{"409 “Not enough seats left”", "after the seat check", "Engine.BookTicket"},
		{"409 “This idempotency key was already used for a different booking”", "one key for two different bookings", "NewIntent"},
	}
	if len(p.BreakIt) != len(want) {
		t.Fatalf("%d break-it rows, want %d", len(p.BreakIt), len(want))
	}
	for i, w := range want {
		r := p.BreakIt[i]
		if !strings.Contains(r.Symptom, w.symptom) || !strings.Contains(r.Cause, w.cause) || !strings.Contains(r.WhereToLook, w.where) {
			t.Errorf("row %d = %+v, want symptom ~%q, cause ~%q, where ~%q", i+1, r, w.symptom, w.cause, w.where)
		}
	}
}

func TestFollowUps(t *testing.T) {
	tests := []struct {
		slug      string
		questions []string // a word of each question, in order
		answers   []string // a word of each answer
	}{
		{"idempotency",
			[]string{"before checking the seats", "Redis", "one user", "keeping keys forever", "isolation level", "reloads the page", "still running", "many clients"},
			[]string{"Not enough seats left", "crashes after writing to one store", "never end up sharing", "16 bytes", "40001", "sessionStorage", "request_in_progress", "Exponential Backoff And Jitter"}},
		{"retry-across-instances",
			[]string{"tied to the user", "same time", "SET NX", "422", "HTTP methods", "second INSERT", "make the key", "same request"},
			[]string{"user_id", "unique constraint", "crash between the two writes", "stable error code", "RFC 9110", "Index Uniqueness Checks", "PaymentIntents", "fields in another order"}},
	}
	for _, tt := range tests {
		t.Run(tt.slug, func(t *testing.T) {
			p := mustGet(t, tt.slug)
			if len(p.FollowUps) != len(tt.questions) {
				t.Fatalf("%d follow-ups, want %d", len(p.FollowUps), len(tt.questions))
			}
			for i, f := range p.FollowUps {
				if !strings.HasSuffix(f.Question, "?") || !strings.Contains(f.Question, tt.questions[i]) {
					t.Errorf("question %d = %q, want a question mentioning %q", i+1, f.Question, tt.questions[i])
				}
				if !strings.Contains(f.Answer, tt.answers[i]) || strings.Contains(f.Answer, "###") {
					t.Errorf("answer %d = %q, want it to mention %q", i+1, f.Answer, tt.answers[i])
				}
			}
		})
	}
}

func TestSequence(t *testing.T) {
	seq := mustGet(t, "idempotency").Sequence
	if seq == nil {
		t.Fatal("lesson has no sequence")
	}
	wantP := []Participant{{"B", "Browser"}, {"A", "API + Postgres"}}
	if !slices.Equal(seq.Participants, wantP) {
		t.Errorf("participants = %+v, want %+v", seq.Participants, wantP)
	}
	want := []Message{
		{From: "B", To: "A", Text: "book 2 seats, key K"},
		{From: "A", To: "A", Text: "booked b1, seats -2, COMMIT", Self: true},
		{From: "A", To: "B", Text: "200 b1 (answer lost)", Reply: true, Lost: true},
		{From: "B", To: "A", Text: "retry: book 2 seats, key K"},
		{From: "A", To: "A", Text: "key K already has b1, write nothing", Self: true},
		{From: "A", To: "B", Text: "200 b1 (same answer)", Reply: true},
	}
	if !slices.Equal(seq.Messages, want) {
		t.Errorf("messages =\n%+v\nwant\n%+v", seq.Messages, want)
	}
}

func TestSpokenAnswer(t *testing.T) {
	tests := []struct {
		slug, section string
		mentions      []string
	}{
		{"idempotency", "Say it in an interview", []string{"UUID", "each retry", "unique constraint", "lock the event row", "409", "constraint settles whatever the lock cannot see", "never disagree"}},
		{"retry-across-instances", "Say it in 30 seconds", []string{"UUID", "unique constraint", "API instance", "409", "process memory", "Redis"}},
	}
	for _, tt := range tests {
		p := mustGet(t, tt.slug)
		s, _ := p.Section(tt.section)
		if !strings.Contains(s.Markdown, "20–30 seconds") {
			t.Errorf("%s: %q is not marked as a 20–30 seconds answer", tt.slug, tt.section)
		}
		if strings.ContainsAny(p.SpokenAnswer, ">*`\n") {
			t.Errorf("%s: SpokenAnswer is not plain text: %q", tt.slug, p.SpokenAnswer)
		}
		if n := len(strings.Fields(p.SpokenAnswer)); n < 50 || n > 100 {
			t.Errorf("%s: SpokenAnswer has %d words; 20–30 seconds of speech is about 50 to 100", tt.slug, n)
		}
		for _, m := range tt.mentions {
			if !strings.Contains(p.SpokenAnswer, m) {
				t.Errorf("%s: SpokenAnswer does not mention %q", tt.slug, m)
			}
		}
	}
}

func TestGetUnknownSlug(t *testing.T) {
	_, err := Get("idempotence")
	if !errors.Is(err, ErrUnknownPage) {
		t.Fatalf("Get(unknown) error = %v, want ErrUnknownPage", err)
	}
	for _, s := range []string{`"idempotence"`, "idempotency", "retry-across-instances"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
}
