package progress

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"time"
)

// CurrentVersion is the schema version of the progress file this learn
// writes. Version 0 is the format without a version field; version 1 saved
// the resume place as {"screen", "name", "section", "step"}, with a
// scenario's variant in "section" (see migrate.go).
const CurrentVersion = 2

// Progress is everything learn remembers about a learner. It is saved as
// JSON by [Store]; the field names of the JSON are part of the schema of
// CurrentVersion. Change it through [Store.Update] so that nothing another
// learn process saved is lost.
type Progress struct {
	// Version is the schema version, CurrentVersion once loaded.
	Version int `json:"version"`
	// Read maps a page slug (lessons) to when the learner marked it read.
	Read map[string]time.Time `json:"read"`
	// Sets maps a set ID (SetCheckpoint, SetBreakIt, SetPredict, SetRedraw,
	// SetInterview) to its answers and scores. Entries are never nil.
	Sets map[string]*SetProgress `json:"sets"`
	// Drill maps a card ID to its spaced-repetition schedule; a card
	// without an entry is new.
	Drill map[string]Review `json:"drill"`
	// DrillSeconds is the countdown of the spoken prompts the learner
	// chose; 0 means DefaultSeconds. See [ClampSeconds].
	DrillSeconds int `json:"drill_seconds,omitempty"`
	// Challenges maps a design-lab challenge ID to when the learner first
	// passed it.
	Challenges map[string]time.Time `json:"challenges,omitempty"`
	// Exercises maps an exercise of learn exercises to what its last
	// check said and the hints the learner asked for.
	Exercises map[string]Exercise `json:"exercises,omitempty"`
	// ExercisesDir is the absolute path of the exercises' module last
	// opened (learn exercises DIR): what the app opens when given none.
	// A top-level field: a learn of version 2 that does not know it keeps
	// it as it was.
	ExercisesDir string `json:"exercises_dir,omitempty"`
	// Resume is where the learner left off: the place the home screen
	// offers to open again; the zero Place for none.
	Resume Place `json:"resume"`
	// UpdatedAt is when the progress was last saved; zero if never, and
	// then left out of the JSON (not "0001-01-01T00:00:00Z").
	UpdatedAt time.Time `json:"updated_at,omitzero"`

	// unknown holds the top-level fields of the file this learn does not
	// know (a newer learn's, of the same version), as they were: they are
	// written back after the known ones, so an older learn saving a newer
	// one's file loses nothing. See decode and MarshalJSON.
	unknown map[string]json.RawMessage
}

// MarshalJSON encodes p as the file holds it: the known fields in the
// order of the struct, then the fields this learn does not know, sorted by
// name, each as it was read.
func (p *Progress) MarshalJSON() ([]byte, error) {
	type known Progress // without this method
	out, err := json.Marshal((*known)(p))
	if err != nil || len(p.unknown) == 0 {
		return out, err
	}
	out = out[:len(out)-1] // the closing brace
	for _, name := range slices.Sorted(maps.Keys(p.unknown)) {
		key, _ := json.Marshal(name)
		out = append(append(append(append(out, ','), key...), ':'), p.unknown[name]...)
	}
	return append(out, '}'), nil
}

// SetProgress is the learner's record of one set.
type SetProgress struct {
	// Answers maps a question ID to its last answer.
	Answers map[string]Answer `json:"answers"`
	// Best and LastScore are attempt scores from 0 to 1; Attempts counts
	// the finished attempts.
	Best      float64 `json:"best"`
	Attempts  int     `json:"attempts"`
	LastScore float64 `json:"last_score"`
	// Next is the question an unfinished attempt continues at (an index
	// into the set's Questions); 0 when no attempt is under way.
	Next int `json:"next,omitempty"`
}

// Answer is the learner's last answer to one question: its score (0 to 1)
// and when it was given.
type Answer struct {
	Score float64   `json:"score"`
	At    time.Time `json:"at"`
}

// NewProgress returns empty progress of CurrentVersion with its maps made.
func NewProgress() *Progress {
	p := &Progress{Version: CurrentVersion}
	p.normalize()
	return p
}

// normalize makes every map and set entry non-nil and every score a number
// from 0 to 1, so that callers never meet a nil map.
func (p *Progress) normalize() {
	if p.Read == nil {
		p.Read = map[string]time.Time{}
	}
	if p.Sets == nil {
		p.Sets = map[string]*SetProgress{}
	}
	if p.Drill == nil {
		p.Drill = map[string]Review{}
	}
	for id, sp := range p.Sets {
		if sp == nil {
			sp = &SetProgress{}
			p.Sets[id] = sp
		}
		if sp.Answers == nil {
			sp.Answers = map[string]Answer{}
		}
		sp.Best, sp.LastScore = clamp01(sp.Best), clamp01(sp.LastScore)
		sp.Attempts = max(sp.Attempts, 0)
		for q, a := range sp.Answers {
			a.Score = clamp01(a.Score)
			sp.Answers[q] = a
		}
	}
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return math.Min(math.Max(x, 0), 1)
}

// MarkRead records that the learner marked the page slug as read at at. A
// page marked again keeps its first date.
func (p *Progress) MarkRead(slug string, at time.Time) {
	p.normalize()
	if _, ok := p.Read[slug]; !ok {
		p.Read[slug] = at
	}
}

// IsRead reports whether the page slug is marked as read.
func (p *Progress) IsRead(slug string) bool {
	_, ok := p.Read[slug]
	return ok
}

// Set returns the record of the set id, creating it when missing.
func (p *Progress) Set(id string) *SetProgress {
	p.normalize()
	sp, ok := p.Sets[id]
	if !ok {
		sp = &SetProgress{Answers: map[string]Answer{}}
		p.Sets[id] = sp
	}
	return sp
}

// Record saves the learner's answer to question qid of set setID: its score
// (clamped to 0..1) at at. It replaces an earlier answer to that question.
func (p *Progress) Record(setID, qid string, score float64, at time.Time) {
	p.Set(setID).Answers[qid] = Answer{Score: clamp01(score), At: at}
}

// FinishAttempt records a finished attempt at set setID with the given
// score (clamped to 0..1; see [Score]): Attempts + 1, LastScore, and Best
// when it is higher.
func (p *Progress) FinishAttempt(setID string, score float64) {
	sp := p.Set(setID)
	score = clamp01(score)
	sp.Attempts++
	sp.LastScore = score
	sp.Best = math.Max(sp.Best, score)
	sp.Next = 0
}

// Exercise is one exercise's progress: its state at the last check
// ("passed", "failing", …), when it first passed, and how many of its
// hints were shown.
type Exercise struct {
	State    string    `json:"state,omitempty"`
	PassedAt time.Time `json:"passed_at,omitzero"`
	Hints    int       `json:"hints,omitempty"`
}

// SetExercise records exercise id's state after a check at t; the first
// pass is kept.
func (p *Progress) SetExercise(id, state string, passed bool, t time.Time) {
	if p.Exercises == nil {
		p.Exercises = map[string]Exercise{}
	}
	e := p.Exercises[id]
	e.State = state
	if passed && e.PassedAt.IsZero() {
		e.PassedAt = t
	}
	p.Exercises[id] = e
}

// TakeHint records that one more hint of exercise id was shown, up to
// most, and returns how many have been.
func (p *Progress) TakeHint(id string, most int) int {
	if p.Exercises == nil {
		p.Exercises = map[string]Exercise{}
	}
	e := p.Exercises[id]
	e.Hints = min(e.Hints+1, most)
	p.Exercises[id] = e
	return e.Hints
}

// PassChallenge records that the learner passed the design lab's challenge
// id at t (the first time only).
func (p *Progress) PassChallenge(id string, t time.Time) {
	if p.Challenges == nil {
		p.Challenges = map[string]time.Time{}
	}
	if _, ok := p.Challenges[id]; !ok {
		p.Challenges[id] = t
	}
}

// Review is the spaced-repetition schedule of one flashcard, as saved; the
// zero Review is a new card. The rule that computes it is quiz.Schedule.
type Review struct {
	// Due is when the card is next shown.
	Due time.Time `json:"due"`
	// IntervalDays is the gap, in days, between the last review and Due;
	// 0 for a new card or one just rated Again.
	IntervalDays float64 `json:"interval_days"`
	// Ease multiplies the interval on Good; 0 means quiz.DefaultEase.
	Ease float64 `json:"ease"`
	// Reps counts the reviews since the card was new or last rated Again.
	Reps int `json:"reps"`
	// Lapses counts the times the card was rated Again.
	Lapses int `json:"lapses"`
}
