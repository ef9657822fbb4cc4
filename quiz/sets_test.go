package quiz

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

func lessonPage(t *testing.T) *lessons.Page {
	t.Helper()
	p, err := lessons.Get(LessonSlug)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cardPage(t *testing.T) *lessons.Page {
	t.Helper()
	p, err := lessons.Get(CardSlug)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The question IDs are stable: saved answers are keyed by them. Changing
// this list means migrating saved progress.
var wantIDs = map[string][]string{
	SetCheckpoint: {"checkpoint/1", "checkpoint/2", "checkpoint/3", "checkpoint/4", "checkpoint/5"},
	SetBreakIt: {"breakit/charged-twice", "breakit/last-seats", "breakit/key-already-used",
		"breakit/other-instance", "breakit/redis-ttl", "breakit/two-events-one-key"},
	SetPredict: {"predict/concurrent-copies", "predict/key-reuse-two-events", "predict/retries-exhausted",
		"predict/lookup-before-lock", "predict/last-seats"},
	SetRedraw: {"redraw/lost-answer"},
}

func TestSetsBuild(t *testing.T) {
	for _, s := range Sets() {
		var ids []string
		for _, q := range s.Questions {
			ids = append(ids, q.ID)
		}
		if !slices.Equal(ids, wantIDs[s.ID]) {
			t.Errorf("set %s has questions %q, want %q", s.ID, ids, wantIDs[s.ID])
		}
		if s.Title == "" || s.Intro == "" || SetTitle(s.ID) != s.Title {
			t.Errorf("set %s: title %q intro %q", s.ID, s.Title, s.Intro)
		}
		for _, q := range s.Questions {
			checkQuestion(t, q)
			if got, ok := s.Question(q.ID); !ok || got.ID != q.ID {
				t.Errorf("Set.Question(%q) not found", q.ID)
			}
		}
	}
}

// checkQuestion checks that q has exactly the fields of its kind, in range,
// and plain text.
func checkQuestion(t *testing.T, q Question) {
	t.Helper()
	fail := func(format string, args ...any) { t.Helper(); t.Errorf(q.ID+": "+format, args...) }
	if q.Prompt == "" || q.Explain == "" || q.Source == "" {
		fail("prompt %q, explain %q, source %q must all be set", q.Prompt, q.Explain, q.Source)
	}
	texts := append([]string{q.Prompt, q.Explain, q.Model}, q.Choices...)
	texts = append(texts, q.Points...)
	if q.Live != nil {
		texts = append(texts, q.Live.Symptom, q.Live.BesideNote)
		texts = append(texts, q.Live.Where...)
	}
	for _, s := range q.Steps {
		texts = append(texts, s.From, s.To, s.Text)
	}
	for _, s := range texts {
		if strings.ContainsAny(s, "`*") {
			fail("text is not plain: %q", s)
		}
	}
	if len(q.Choices) > 0 && len(slices.Compact(slices.Sorted(slices.Values(q.Choices)))) != len(q.Choices) {
		fail("repeated choice in %q", q.Choices)
	}
	for _, c := range q.Correct {
		if c < 0 || c >= len(q.Choices) {
			fail("correct index %d out of range", c)
		}
	}
	if !slices.IsSorted(q.Correct) {
		fail("Correct %v is not in increasing order", q.Correct)
	}
	hasChoices, hasSteps, hasShort := len(q.Choices) > 0, len(q.Steps) > 0, q.Model != "" || len(q.Points) > 0
	if q.Predict != nil && q.Kind != KindPredict {
		fail("a %s question with a prediction", q.Kind)
	}
	switch q.Kind {
	case KindSingle:
		if len(q.Correct) != 1 || !hasChoices || hasSteps || hasShort || q.Live != nil {
			fail("not a single-choice question")
		}
	case KindMultiple:
		if len(q.Correct) < 2 || len(q.Correct) >= len(q.Choices) || hasSteps || hasShort || q.Live != nil {
			fail("not a multiple-choice question with some right and some wrong choices")
		}
	case KindOrder:
		if len(q.Steps) < 2 || hasChoices || hasShort || q.Live != nil {
			fail("not an order question")
		}
	case KindShort:
		if q.Model == "" || len(q.Points) < 2 || hasChoices || hasSteps || q.Live != nil {
			fail("not a short-answer question")
		}
	case KindLive:
		l := q.Live
		if l == nil || len(q.Correct) != 1 || len(q.Choices) < 3 || hasSteps || hasShort {
			fail("not a live question")
			return
		}
		if l.WhereCorrect < 0 || l.WhereCorrect >= len(l.Where) || len(l.Where) < 3 {
			fail("where %d of %q", l.WhereCorrect, l.Where)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(l.Where)))) != len(l.Where) {
			fail("repeated place in %q", l.Where)
		}
		sc, err := sim.Lookup(l.Scenario)
		if err != nil {
			fail("%v", err)
			return
		}
		if l.Variant == "" || l.Beside == "" || l.Variant == l.Beside {
			fail("variant %q beside %q: both must be set and differ", l.Variant, l.Beside)
		}
		if !sc.HasBroken() {
			fail("scenario %s has no broken variant to compare with", sc.Name)
		}
		if l.Symptom == "" || l.BesideNote == "" {
			fail("symptom and beside note must be set")
		}
		if !slices.IsSorted(l.Claim.Statuses) || !slices.IsSorted(l.Claim.Messages) || len(l.Claim.Statuses) == 0 {
			fail("claim statuses %v and messages %q must be sorted and not empty", l.Claim.Statuses, l.Claim.Messages)
		}
	case KindPredict:
		p := q.Predict
		if p == nil || hasChoices || hasSteps || hasShort || q.Live != nil {
			fail("not a predict question")
			return
		}
		if _, err := sim.Lookup(p.Scenario); err != nil {
			fail("%v", err)
		}
		var measures []Measure
		for _, sl := range p.Slots {
			measures = append(measures, sl.Measure)
			if len(sl.Choices) < 2 || len(sl.Values) != len(sl.Choices) || sl.Right < 0 || sl.Right >= len(sl.Choices) || sl.What == "" {
				fail("slot %+v", sl)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(sl.Values)))) != len(sl.Values) {
				fail("slot %s: two choices stand for one value: %q", sl.What, sl.Values)
			}
			texts = append(texts, sl.Choices...)
		}
		if !slices.Equal(measures, []Measure{MeasureAnswers, MeasureRows, MeasureSeats, MeasureGuard}) {
			fail("predicts %q, want the answers, the rows, the seats and the guard", measures)
		}
	default:
		fail("unknown kind %q", q.Kind)
	}
}

func TestCheckpointFollowsTheLesson(t *testing.T) {
	lesson := lessonPage(t)
	s := Checkpoint()
	if len(s.Questions) != 5 || len(lesson.Checkpoint) != 5 {
		t.Fatalf("%d questions, the lesson has %d; want 5", len(s.Questions), len(lesson.Checkpoint))
	}
	kinds := []Kind{KindShort, KindMultiple, KindSingle, KindSingle, KindSingle}
	for i, q := range s.Questions {
		if !strings.HasPrefix(q.Prompt, plain(lesson.Checkpoint[i])) {
			t.Errorf("%s prompt %q is not the lesson's question %q", q.ID, q.Prompt, lesson.Checkpoint[i])
		}
		if q.Kind != kinds[i] {
			t.Errorf("%s is %s, want %s", q.ID, q.Kind, kinds[i])
		}
	}
	// The facts the answers must carry.
	right := func(q Question) string { return q.Choices[q.Correct[0]] }
	if r := right(s.Questions[2]); !strings.Contains(r, "409") || !strings.Contains(r, engine.MsgKeyReused) {
		t.Errorf("checkpoint/3 right answer %q lacks 409 and the lesson's message", r)
	}
	if r := right(s.Questions[3]); !strings.Contains(r, "lock on the event row") || !strings.Contains(r, "replays") || !strings.Contains(r, "UNIQUE (user_id, idempotency_key)") {
		t.Errorf("checkpoint/4 right answer %q", r)
	}
	// Checkpoint 4's explanation says who answers what: for one key sent
	// for two events the loser of the constraint answers 409, and only in
	// a design that looks the key up before the lock does a loser answer
	// with the winner's booking.
	if why := checkpoint4Wrong(s.Questions[3].Explain); why != "" {
		t.Errorf("checkpoint/4 explanation: %s:\n%s", why, s.Questions[3].Explain)
	}
	old := "The constraint settles what the lock does not cover, such as one key sent for two events, or a design that looks the key up before locking: one INSERT wins, the loser gets 23505, rolls back as a whole (its seat decrement too), then reads the winner's booking and answers with it (learn play lookup-before-lock)."
	if checkpoint4Wrong(old) == "" {
		t.Error("the old explanation, whose loser answered with the winner's booking for two events too, passes the check")
	}
	if r := right(s.Questions[4]); !strings.Contains(r, "idempotency key") {
		t.Errorf("checkpoint/5 right answer %q", r)
	}
	var picked []string
	for _, c := range s.Questions[1].Correct {
		picked = append(picked, s.Questions[1].Choices[c])
	}
	joined := strings.Join(picked, " | ")
	for _, fact := range []string{"decides to book", "each retry", "changes the quantity"} {
		if !strings.Contains(joined, fact) {
			t.Errorf("checkpoint/2 right choices %q lack %q", joined, fact)
		}
	}
}

// checkpoint4Wrong says what explain gets wrong about the loser of the
// unique constraint, or "": a sentence on one key for two events must say
// it answers 409 with the engine's message, and every sentence in which a
// loser answers with the winner's booking must be about a lookup before
// the lock.
func checkpoint4Wrong(explain string) string {
	twoEvents := false
	for _, sentence := range strings.SplitAfter(explain, ". ") {
		if strings.Contains(sentence, "two events") {
			twoEvents = true
			if !strings.Contains(sentence, "409 “"+engine.MsgKeyReused+"”") {
				return "the sentence on one key for two events does not say the loser answers 409 “" + engine.MsgKeyReused + "”"
			}
		}
		if strings.Contains(sentence, "answers with the winner's booking") && !strings.Contains(sentence, "before lock") {
			return fmt.Sprintf("a loser answers with the winner's booking outside a design that looks the key up before locking: %q", sentence)
		}
	}
	if !twoEvents {
		return "it says nothing of one key sent for two events"
	}
	return ""
}

func TestRedrawFollowsTheSequence(t *testing.T) {
	lesson := lessonPage(t)
	s := Redraw()
	if len(s.Questions) != 1 {
		t.Fatalf("%d questions", len(s.Questions))
	}
	q := s.Questions[0]
	msgs := lesson.Sequence.Messages
	if len(q.Steps) != 6 || len(msgs) != 6 {
		t.Fatalf("%d steps, the lesson's sequence has %d; want 6", len(q.Steps), len(msgs))
	}
	for i, m := range msgs {
		from, _ := lesson.Sequence.Participant(m.From)
		to, _ := lesson.Sequence.Participant(m.To)
		want := Step{From: from.Name, To: to.Name, Text: m.Text}
		if q.Steps[i] != want {
			t.Errorf("step %d = %+v, want %+v", i+1, q.Steps[i], want)
		}
	}
	// Who sends what: the six steps of the lost answer.
	want := []string{
		"Browser → API + Postgres: book 2 seats, key K",
		"API + Postgres: booked b1, seats -2, COMMIT",
		"API + Postgres → Browser: 200 b1 (answer lost)",
		"Browser → API + Postgres: retry: book 2 seats, key K",
		"API + Postgres: key K already has b1, write nothing",
		"API + Postgres → Browser: 200 b1 (same answer)",
	}
	for i, st := range q.Steps {
		if st.String() != want[i] {
			t.Errorf("step %d = %q, want %q", i+1, st, want[i])
		}
	}
	// As the learner sees them: nothing tells the first request from the
	// retry, or the lost answer from the one that arrives, until the
	// blanks are filled in; filled in right, each says what its message
	// says.
	if len(q.Frames) != 6 {
		t.Fatalf("%d frames, want one per step", len(q.Frames))
	}
	looks := map[string]int{}
	for i, f := range q.Frames {
		looks[q.Steps[i].From+"→"+q.Steps[i].To+": "+f.Text]++
		for _, away := range []string{"retry", "lost", "same answer", "already", "(", "K", "b1"} {
			if strings.Contains(f.Text, away) {
				t.Errorf("frame %d %q gives its place away: %q", i+1, f.Text, away)
			}
		}
		if strings.Count(f.Text, BlankMark) != len(f.Blanks) || len(f.Blanks) == 0 {
			t.Errorf("frame %d %q has %d blanks", i+1, f.Text, len(f.Blanks))
		}
	}
	for look, n := range looks {
		if n != 2 {
			t.Errorf("%d steps look like %q, want the two of a pair", n, look)
		}
	}
	filled := []string{
		"book 2 seats, the key K",
		"under the lock: seats -2, insert b1, COMMIT",
		"answer 200 with booking b1, lost on the way",
		"book 2 seats, the key K",
		"under the lock: key K has b1, write nothing, COMMIT",
		"answer 200 with booking b1, reaches the browser",
	}
	for i, f := range q.Frames {
		got := f.Fill(func(b int) string { return f.Blanks[b].Choices[f.Blanks[b].Right] })
		if got != filled[i] {
			t.Errorf("frame %d filled in right = %q, want %q", i+1, got, filled[i])
		}
	}
}

func TestBreakItFollowsTheTable(t *testing.T) {
	lesson := lessonPage(t)
	s := BreakIt()
	if len(s.Questions) < 6 {
		t.Fatalf("%d questions, want the table's 3 and at least 3 more", len(s.Questions))
	}
	for i, row := range lesson.BreakIt {
		q := s.Questions[i]
		if q.Live.Symptom != plain(row.Symptom) || !strings.HasPrefix(q.Prompt, plain(row.Symptom)) {
			t.Errorf("%s does not carry Break it row %d: %+v", q.ID, i+1, row)
		}
		if at, ok := placeOf(plain(row.WhereToLook)); !ok || at != q.Live.WhereCorrect {
			t.Errorf("%s: the right place is %q, the lesson's row %d says %q", q.ID, q.Live.Where[q.Live.WhereCorrect], i+1, row.WhereToLook)
		}
	}
	scenarios := map[string]string{}
	for _, q := range s.Questions {
		if q.Kind != KindLive {
			t.Errorf("%s is %s, want live", q.ID, q.Kind)
			continue
		}
		scenarios[q.ID] = q.Live.Scenario
	}
	want := map[string]string{
		"breakit/charged-twice":      "new-key-per-retry",
		"breakit/last-seats":         "last-seats",
		"breakit/key-already-used":   "different-quantity",
		"breakit/other-instance":     "other-instance",
		"breakit/redis-ttl":          "redis-ttl",
		"breakit/two-events-one-key": "key-reuse-two-events",
	}
	for id, sc := range want {
		if scenarios[id] != sc {
			t.Errorf("%s runs %q, want %q", id, scenarios[id], sc)
		}
	}
	// The 409 of the third row is the correct engine refusing the client's
	// reused key: only that question shows the correct variant.
	for _, q := range s.Questions {
		wantVariant := sim.Broken
		if q.ID == "breakit/key-already-used" {
			wantVariant = sim.Correct
		}
		if q.Live.Variant != wantVariant {
			t.Errorf("%s shows its symptom with the %s variant, want %s", q.ID, q.Live.Variant, wantVariant)
		}
	}
}

func TestInterviewFollowsThePages(t *testing.T) {
	lesson, card := lessonPage(t), cardPage(t)
	d := Interview()
	if len(d.Prompts) != 2 {
		t.Fatalf("%d spoken prompts, want 2", len(d.Prompts))
	}
	if d.Prompts[0].Model != lesson.SpokenAnswer || d.Prompts[1].Model != card.SpokenAnswer || d.Prompts[1].Question != card.Title {
		t.Errorf("spoken prompts do not carry the pages' answers: %+v", d.Prompts)
	}
	for _, p := range d.Prompts {
		if p.Seconds != 30 || len(p.Points) < 4 || p.ID == "" || p.Question == "" || p.Source == "" {
			t.Errorf("prompt %+v", p)
		}
	}
	if len(d.Cards) != 16 {
		t.Fatalf("%d cards, want the 8 follow-ups and the 8 counter-questions", len(d.Cards))
	}
	fus := append(slices.Clone(lesson.FollowUps), card.FollowUps...)
	ids := map[string]bool{}
	for i, c := range d.Cards {
		if c.Front != fus[i].Question || c.Back != fus[i].Answer || c.Source == "" {
			t.Errorf("card %d = %+v, want %+v", i, c, fus[i])
		}
		if ids[c.ID] {
			t.Errorf("card id %s repeated", c.ID)
		}
		ids[c.ID] = true
	}
	wantIDs := []string{"followup/key-before-seats", "followup/redis-ttl", "followup/key-per-user", "followup/keys-forever", "followup/isolation-level", "followup/page-reload", "followup/request-in-flight", "followup/retry-storm",
		"counter/key-per-user", "counter/simultaneous", "counter/redis-set-nx", "counter/422-or-409", "counter/idempotent-methods", "counter/insert-waits", "counter/server-made-key", "counter/fingerprint"}
	for _, id := range wantIDs {
		if !ids[id] {
			t.Errorf("card %s missing", id)
		}
	}
	if got := len(Cards()); got != 16 {
		t.Errorf("Cards() has %d", got)
	}
}

func TestClampSeconds(t *testing.T) {
	for in, want := range map[int]int{0: 30, 1: MinSeconds, 20: 20, 30: 30, 45: 45, 1000: MaxSeconds, -5: MinSeconds} {
		if got := ClampSeconds(in); got != want {
			t.Errorf("ClampSeconds(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestPageShapeChanges edits copies of the pages the way a careless page
// edit would, and checks that building the sets fails with a message that
// names the page.
func TestPageShapeChanges(t *testing.T) {
	edit := func(f func(*lessons.Page)) *lessons.Page {
		p := *lessonPage(t)
		f(&p)
		return &p
	}
	card := cardPage(t)
	tests := []struct {
		name  string
		build func() error
	}{
		{"four checkpoint questions", func() error {
			_, err := checkpointFrom(edit(func(p *lessons.Page) { p.Checkpoint = p.Checkpoint[:4] }))
			return err
		}},
		{"no sequence", func() error {
			_, err := redrawFrom(edit(func(p *lessons.Page) { p.Sequence = nil }))
			return err
		}},
		{"five messages", func() error {
			_, err := redrawFrom(edit(func(p *lessons.Page) {
				seq := *p.Sequence
				seq.Messages = seq.Messages[1:]
				p.Sequence = &seq
			}))
			return err
		}},
		{"the retry with another key", func() error {
			_, err := redrawFrom(edit(func(p *lessons.Page) {
				seq := *p.Sequence
				seq.Messages = slices.Clone(seq.Messages)
				seq.Messages[3].Text = "retry: book 2 seats, key K2"
				p.Sequence = &seq
			}))
			return err
		}},
		{"the first answer arrives", func() error {
			_, err := redrawFrom(edit(func(p *lessons.Page) {
				seq := *p.Sequence
				seq.Messages = slices.Clone(seq.Messages)
				seq.Messages[2].Lost = false
				p.Sequence = &seq
			}))
			return err
		}},
		{"the lookup writes", func() error {
			_, err := redrawFrom(edit(func(p *lessons.Page) {
				seq := *p.Sequence
				seq.Messages = slices.Clone(seq.Messages)
				seq.Messages[4].Text = "key K already has b1, seats -2"
				p.Sequence = &seq
			}))
			return err
		}},
		{"break it rows swapped", func() error {
			_, err := breakItFrom(edit(func(p *lessons.Page) {
				rows := slices.Clone(p.BreakIt)
				rows[0], rows[1] = rows[1], rows[0]
				p.BreakIt = rows
			}))
			return err
		}},
		{"two break it rows", func() error {
			_, err := breakItFrom(edit(func(p *lessons.Page) { p.BreakIt = p.BreakIt[:2] }))
			return err
		}},
		{"follow-ups reordered", func() error {
			_, err := interviewFrom(edit(func(p *lessons.Page) {
				fus := slices.Clone(p.FollowUps)
				slices.Reverse(fus)
				p.FollowUps = fus
			}), card)
			return err
		}},
		{"a follow-up more", func() error {
			_, err := interviewFrom(edit(func(p *lessons.Page) {
				p.FollowUps = append(slices.Clone(p.FollowUps), lessons.FollowUp{Question: "q", Answer: "a"})
			}), card)
			return err
		}},
	}
	for _, tt := range tests {
		err := tt.build()
		if err == nil || !strings.Contains(err.Error(), "changed shape") || !strings.Contains(err.Error(), "idempotency.md") {
			t.Errorf("%s: err = %v, want a changed-shape error naming the page", tt.name, err)
		}
	}
}

// sameCause holds, for each live question, the words that its right cause
// (quiz's own, put so as not to echo the prompt) and the cause of its
// verdict's diagnosis must both contain: the two name the same fault.
var sameCause = map[string][]string{
	"breakit/charged-twice":      {"client", "fresh key", "retry"},
	"breakit/last-seats":         {"looked up", "after the seat check"},
	"breakit/key-already-used":   {"client", "key"},
	"breakit/other-instance":     {"memory"},
	"breakit/redis-ttl":          {"transaction", "expire"},
	"breakit/two-events-one-key": {"UNIQUE constraint", "(user_id, idempotency_key)"},
}

// The Break-it quiz, the lesson's Break-it table and sim's verdicts say the
// same: each live question's right cause names the fault of the diagnosis
// its run's verdict shows, its right place is the place of the pool that
// the diagnosis points at, and the lesson's rows are those diagnoses word
// for word.
func TestBreakItAgreesWithTheVerdicts(t *testing.T) {
	for _, q := range BreakIt().Questions {
		d := sim.DiagnosisOf(q.Live.Scenario, q.Live.Variant)
		if d == nil {
			t.Errorf("%s: %s (%s) has no diagnosis", q.ID, q.Live.Scenario, q.Live.Variant)
			continue
		}
		words, ok := sameCause[q.ID]
		if !ok {
			t.Errorf("%s: no words to hold its cause to the verdict's", q.ID)
		}
		got := q.Choices[q.Correct[0]]
		for _, w := range words {
			if !strings.Contains(got, w) || !strings.Contains(d.Cause, w) {
				t.Errorf("%s: the right cause %q and the verdict's %q do not both say %q", q.ID, got, d.Cause, w)
			}
		}
		if at, ok := placeOf(d.Where); !ok || at != q.Live.WhereCorrect {
			t.Errorf("%s: the right place is %q; the verdict's %q points at place %d of the pool (one: %v)", q.ID, q.Live.Where[q.Live.WhereCorrect], d.Where, at, ok)
		}
	}
	lesson, err := lessons.Get("idempotency")
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		scenario string
		v        sim.Variant
	}{{"new-key-per-retry", sim.Broken}, {"last-seats", sim.Broken}, {"different-quantity", sim.Correct}}
	for i, r := range lesson.BreakIt {
		d := sim.DiagnosisOf(rows[i].scenario, rows[i].v)
		if plain(r.Symptom) != d.Symptom || plain(r.Cause) != d.Cause || plain(r.WhereToLook) != d.Where {
			t.Errorf("lesson row %d: %q | %q | %q\nverdict: %q | %q | %q", i+1, plain(r.Symptom), plain(r.Cause), plain(r.WhereToLook), d.Symptom, d.Cause, d.Where)
		}
	}
}

// The sets are built once per process: the app's start and its first
// frame ask for them several times, and each build from the pages took
// about 3 ms and thousands of allocations.
func TestSetsAreBuiltOnce(t *testing.T) {
	Sets()
	if n := testing.AllocsPerRun(20, func() { Sets() }); n > 40 {
		t.Errorf("Sets allocates %.0f times a call after the first, want the sets built once (at most 40: PredictSet is a literal)", n)
	}
}
