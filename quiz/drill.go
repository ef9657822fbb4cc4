package quiz

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
)

// The countdown of a spoken prompt, in seconds. The sources say to answer in
// 20 to 30 seconds; the drill gives 30 unless the learner changes it.
const (
	DefaultSeconds = 30
	MinSeconds     = 10
	MaxSeconds     = 120
)

// ClampSeconds returns s limited to MinSeconds..MaxSeconds, or
// DefaultSeconds when s is 0 (not set).
func ClampSeconds(s int) int {
	if s == 0 {
		return DefaultSeconds
	}
	return min(max(s, MinSeconds), MaxSeconds)
}

// Seconds is the countdown of the spoken prompts that p's learner chose:
// p.DrillSeconds clamped by [ClampSeconds].
func Seconds(p *progress.Progress) int { return ClampSeconds(p.DrillSeconds) }

// Drill is the interview drill: spoken prompts answered against a countdown,
// and flashcards scheduled by spaced repetition ([Schedule], [Due]).
type Drill struct {
	Prompts []SpokenPrompt
	Cards   []Card
}

// SpokenPrompt is an interview question to answer aloud (or by typing)
// before the countdown ends, then to grade by ticking the key points of the
// model answer ([GradeSpoken]).
type SpokenPrompt struct {
	// ID is stable across versions; it keys the learner's answers in the
	// SetInterview entry of [Progress.Sets].
	ID string
	// Question is what the interviewer asks (plain text).
	Question string
	// Model is the model answer in 20 to 30 seconds (plain text), from the
	// page's spoken answer.
	Model string
	// Points are the key points of Model that the learner ticks.
	Points []string
	// Cues say, for each of Points, in which words a typed answer makes
	// it ([Mentions]); a spoken answer is not checked.
	Cues []Cue
	// Seconds is the countdown, DefaultSeconds unless the learner chose
	// another ([Progress.DrillSeconds]).
	Seconds int
	// Source names the page section, e.g. "Idempotency › Say it in an interview".
	Source string
}

// Card is a flashcard: a follow-up or counter-question and its answer.
type Card struct {
	// ID is stable across versions; it keys the card's schedule in
	// [Progress.Drill].
	ID string
	// Front is the question, Back its answer; both Markdown, as the page
	// has them.
	Front, Back string
	// Source names the page section, e.g. "Idempotency › Follow-ups 2".
	Source string
}

// Card IDs by position in the lesson's Follow-ups and the card's
// Counter-questions, each with a word its question must contain so that a
// reordered page fails the tests instead of mixing up saved schedules.
var (
	followUpIDs = []struct{ id, mustContain string }{
		{"followup/key-before-seats", "seats"},
		{"followup/redis-ttl", "Redis"},
		{"followup/key-per-user", "user"},
		{"followup/keys-forever", "forever"},
		{"followup/isolation-level", "isolation"},
		{"followup/page-reload", "reload"},
		{"followup/request-in-flight", "still running"},
		{"followup/retry-storm", "many clients"},
	}
	counterIDs = []struct{ id, mustContain string }{
		{"counter/key-per-user", "user"},
		{"counter/simultaneous", "same time"},
		{"counter/redis-set-nx", "SET NX"},
		{"counter/422-or-409", "422"},
		{"counter/idempotent-methods", "HTTP methods"},
		{"counter/insert-waits", "INSERT"},
		{"counter/server-made-key", "server"},
		{"counter/fingerprint", "same request"},
	}
)

// The entries cues share: words for the key, for the intent it belongs
// to, for sending it again, and for the refusal of a key reused.
var (
	idWords       = []string{"uuid", "key", "token", "id "}
	intentWords   = []string{"intent", "per booking", "each booking", "every booking", "decision", "decides", "click", "per purchase"}
	resendWords   = []string{"retr", "again", "resen", "reus", "keep", "kept", "same key", "same value", "same uuid"}
	conflictWords = []string{"409", "conflict", "refus", "reject", "error"}
)

// Interview is the drill: the lesson's interview answer and the interview
// card's question as spoken prompts (DefaultSeconds each), and as cards the
// lesson's four follow-ups and the card's three counter-questions. It panics
// like [Checkpoint] if a page changes shape.
func Interview() Drill { return must(buildInterview()) }

// Cards returns the drill's flashcards (Interview().Cards).
func Cards() []Card { return Interview().Cards }

func buildInterview() (Drill, error) {
	lesson, card, err := pages()
	if err != nil {
		return Drill{}, err
	}
	return interviewFrom(lesson, card)
}

// interviewFrom builds the drill from the lesson and the interview card.
func interviewFrom(lesson, card *lessons.Page) (Drill, error) {
	d := Drill{Prompts: []SpokenPrompt{
		{
			ID:       "interview/idempotency",
			Question: "How do idempotency keys make a booking retry safe?",
			Model:    lesson.SpokenAnswer,
			Points: []string{
				"One UUID per booking intent, sent again on every retry",
				"A unique constraint on (user, key) in the bookings table",
				"In the transaction: lock the event row, then look up the key before anything else",
				"An existing booking comes back unchanged; the same key with a different payload gets 409",
				"Two simultaneous copies queue on the event row's lock: the second finds the first's booking; the constraint settles what the lock cannot see",
				"The key lives in the booking row, so it can never disagree with the booking",
			},
			Cues: []Cue{
				{idWords, intentWords, resendWords},
				{{"unique"}, {"user"}},
				{{"lock", "for update"}, {"look", "check", "find", "search", "select", "query"}},
				{conflictWords, {"differ", "other", "another", "mismatch", "chang", "not the same"}},
				{{"simultan", "same time", "same instant", "same moment", "concurren", "together", "at once", "parallel", "race", "two copies", "both copies"},
					{"queue", "wait", "serializ", "serialis", "in turn", "one after", "lock"}},
				{{"row", "column", "same transaction", "with the booking", "in the booking"},
					{"disagree", "contradict", "consistent", "never differ", "atomic", "same transaction", "commit", "together", "in sync"}},
			},
			Seconds: DefaultSeconds,
			Source:  lesson.Title + " › Say it in an interview",
		},
		{
			ID:       "interview/" + CardSlug,
			Question: card.Title,
			Model:    card.SpokenAnswer,
			Points: []string{
				"One UUID per booking intent, kept across retries",
				"The key is stored in the booking row, under a unique constraint on user and key",
				"Booking and seat change commit in one transaction, so any API instance finds the booking",
				"A reused key with a different event or quantity gets 409",
				"No reliance on process memory or on a Redis entry that may expire",
			},
			Cues: []Cue{
				{idWords, intentWords, resendWords},
				{{"unique"}, {"row", "table", "column", "database", "postgres"}},
				{{"transaction", "atomic", "commit"}, {"instance", "server", "node", "any api", "every api", "other api", "whichever api"}},
				{conflictWords, {"differ", "other", "another", "mismatch", "chang", "not the same"}},
				{{"memory", "redis", "cache", "expir", "ttl", "in process"}},
			},
			Seconds: DefaultSeconds,
			Source:  "Interview card › Say it in 30 seconds",
		},
	}}
	for _, p := range d.Prompts {
		if strings.TrimSpace(p.Model) == "" {
			return Drill{}, fmt.Errorf("quiz: %s has no spoken answer on its page", p.ID)
		}
	}
	add := func(p *lessons.Page, section string, ids []struct{ id, mustContain string }) error {
		if len(p.FollowUps) != len(ids) {
			return shapeError(p, "%s has %s, quiz has card IDs for %d", section, english.Plural(len(p.FollowUps), "question", ""), len(ids))
		}
		for i, f := range p.FollowUps {
			if !strings.Contains(f.Question, ids[i].mustContain) {
				return shapeError(p, "%s %d (%q) should contain %q", section, i+1, f.Question, ids[i].mustContain)
			}
			d.Cards = append(d.Cards, Card{
				ID:     ids[i].id,
				Front:  f.Question,
				Back:   f.Answer,
				Source: fmt.Sprintf("%s › %s %d", pageName(p), section, i+1),
			})
		}
		return nil
	}
	if err := add(lesson, "Follow-ups", followUpIDs); err != nil {
		return Drill{}, err
	}
	if err := add(card, "Counter-questions", counterIDs); err != nil {
		return Drill{}, err
	}
	return d, nil
}

// pageName is the short name of a page in a Source: the lesson's title, or
// "Interview card".
func pageName(p *lessons.Page) string {
	if p.Kind == lessons.KindInterview {
		return "Interview card"
	}
	return p.Title
}
