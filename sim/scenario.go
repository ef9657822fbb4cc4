package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Variant selects the correct design or a deliberately broken one.
type Variant string

// The variants.
const (
	Correct Variant = "correct"
	Broken  Variant = "broken"
)

// ParseVariant accepts "correct" (also "") and "broken".
func ParseVariant(s string) (Variant, error) {
	switch Variant(s) {
	case "", Correct:
		return Correct, nil
	case Broken:
		return Broken, nil
	}
	return "", fmt.Errorf("unknown variant %q: use correct or broken", s)
}

// Copy limits of concurrent-copies (and the race screen).
const (
	MinCopies     = 2
	MaxCopies     = 100
	DefaultCopies = 10
)

// Scenario is a named, self-contained run of the booking flow on a fresh
// schema with its own event and users.
type Scenario struct {
	Name      string
	Title     string
	Summary   string // what the correct design shows, one line
	Broken    string // what the broken variant gets wrong, one line; "" when it has none
	Seats     int    // seats of the event at the start
	Quantity  int    // seats each intent asks for
	Instances int    // API instances; 0 means 1
	run       func(ctx context.Context, r *Run) ([]Outcome, error)
}

// HasBroken reports whether the scenario has a broken variant.
func (s *Scenario) HasBroken() bool { return s.Broken != "" }

var scenarios = []*Scenario{
	{
		Name:     "lost-answer",
		Title:    "The lost answer",
		Summary:  "book 2 seats with key K, the answer is lost after COMMIT, the retry with K gets the same booking back",
		Seats:    10,
		Quantity: 2,
		run:      runLostAnswer,
	},
	{
		Name:     "concurrent-copies",
		Title:    "Simultaneous copies",
		Summary:  "N copies of one request at the same instant, each on its own connection: N answers of 200, one booking id, one row, 2 seats",
		Seats:    10,
		Quantity: 2,
		run:      runConcurrentCopies,
	},
}

// Scenarios lists every scenario in lesson order.
func Scenarios() []*Scenario { return append([]*Scenario(nil), scenarios...) }

// Lookup finds a scenario by name; the error lists the names.
func Lookup(name string) (*Scenario, error) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("unknown scenario %q; the scenarios are: %s", name, strings.Join(names, ", "))
}

// Options shape one run.
type Options struct {
	Variant Variant
	Copies  int          // concurrent-copies: MinCopies..MaxCopies; 0 means DefaultCopies
	Trace   TraceOptions // stream and gate the trace for a viewer
	Clock   Clock        // nil: a FakeClock at the current second
}

// Run is one prepared run of a scenario: its stage is up and its event is in
// the table, nothing has been sent yet.
type Run struct {
	Scenario *Scenario
	Options  Options
	Stage    *Stage
	Trace    *Trace
	EventID  int64
	User     string // the user whose booking rows the report counts
	seats    int    // seats of every event at the start, summed
}

// Prepare builds the stage of a run: schema, tables, API instances, the
// event. Close the run when done.
func (s *Scenario) Prepare(ctx context.Context, db Database, opts Options) (*Run, error) {
	if opts.Variant == "" {
		opts.Variant = Correct
	}
	if opts.Variant == Broken && !s.HasBroken() {
		return nil, fmt.Errorf("scenario %s has no broken variant", s.Name)
	}
	if opts.Copies == 0 {
		opts.Copies = DefaultCopies
	}
	if opts.Copies < MinCopies || opts.Copies > MaxCopies {
		return nil, fmt.Errorf("copies must be from %d to %d, got %d", MinCopies, MaxCopies, opts.Copies)
	}
	if opts.Clock == nil {
		opts.Clock = NewFakeClock(time.Now().Truncate(time.Second))
	}
	trace := NewTrace(opts.Clock, opts.Trace)
	st, err := NewStage(ctx, db, StageConfig{
		Instances: max(s.Instances, 1),
		MaxConns:  opts.Copies + 2,
		Clock:     opts.Clock,
		Trace:     trace,
	})
	if err != nil {
		return nil, err
	}
	r := &Run{Scenario: s, Options: opts, Stage: st, Trace: trace, User: DemoUsers()[TokenAda], seats: s.Seats}
	r.EventID, err = st.AddEvent(ctx, "Workshop night", s.Seats, opts.Clock.Now().Add(30*24*time.Hour))
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return r, nil
}

// Execute runs the scenario to its end, closes the trace, and reports what
// the browser saw and what the tables hold.
func (r *Run) Execute(ctx context.Context) (*Report, error) {
	outcomes, err := r.Scenario.run(ctx, r)
	r.Trace.Close()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.report(ctx, outcomes)
}

// Close removes the run's stage and schema.
func (r *Run) Close() error { return r.Stage.Close() }

// Rows reads the run's tables (committed rows).
func (r *Run) Rows(ctx context.Context) (Rows, error) { return r.Stage.Rows(ctx) }

// Report is the headless result of a run (learn demo NAME --json).
type Report struct {
	Scenario    string         `json:"scenario"`
	Variant     Variant        `json:"variant"`
	Answers     []AnswerReport `json:"answers"`      // every answer that reached the browser, in arrival order
	Lost        int            `json:"lost"`         // answers lost on the way back
	BookingRows int            `json:"booking_rows"` // rows in bookings for the run's user afterwards
	SeatsTaken  int            `json:"seats_taken"`  // seats the events lost during the run
	Attempts    []IntentReport `json:"attempts"`     // every try of every intent
}

// AnswerReport is one answer that reached the browser.
type AnswerReport struct {
	Status    int     `json:"status"`
	BookingID *string `json:"booking_id"` // null for an answer without a booking
	Replayed  bool    `json:"replayed"`
}

// IntentReport is the tries of one intent.
type IntentReport struct {
	Intent int         `json:"intent"`
	Key    string      `json:"key"`
	Tries  []TryResult `json:"tries"`
}

func (r *Run) report(ctx context.Context, outcomes []Outcome) (*Report, error) {
	rep := &Report{Scenario: r.Scenario.Name, Variant: r.Options.Variant, Answers: []AnswerReport{}}
	for _, ev := range r.Trace.Recorded() {
		if ev.Kind != KindAnswer {
			continue
		}
		if ev.Lost {
			rep.Lost++
			continue
		}
		a := AnswerReport{Status: ev.Status, Replayed: ev.Replayed}
		if ev.BookingID != "" {
			id := ev.BookingID
			a.BookingID = &id
		}
		rep.Answers = append(rep.Answers, a)
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].Intent.Number < outcomes[j].Intent.Number })
	for _, o := range outcomes {
		rep.Attempts = append(rep.Attempts, IntentReport{Intent: o.Intent.Number, Key: o.Intent.Key.String(), Tries: o.Tries})
	}
	var seatsLeft int
	err := r.Stage.Admin.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM bookings WHERE user_id = $1),
		(SELECT coalesce(sum(seats_left), 0) FROM events)`, r.User).Scan(&rep.BookingRows, &seatsLeft)
	if err != nil {
		return nil, fmt.Errorf("count rows after the run: %w", err)
	}
	rep.SeatsTaken = r.seats - seatsLeft
	return rep, nil
}

// runLostAnswer: one intent; the network loses the first answer after the
// API committed; the browser retries with the same key after 1 s.
func runLostAnswer(ctx context.Context, r *Run) ([]Outcome, error) {
	lose := func(a Attempt) Fault {
		if a.Try == 1 {
			return LoseAnswer
		}
		return Deliver
	}
	in := NewIntent(1, r.EventID, r.Scenario.Quantity)
	out := r.Stage.Browser(TokenAda, lose).Book(ctx, in)
	return []Outcome{out}, nil
}

// runConcurrentCopies: Copies copies of one request (one key), each from its
// own client and connection, released at the same instant.
func runConcurrentCopies(ctx context.Context, r *Run) ([]Outcome, error) {
	in := NewIntent(1, r.EventID, r.Scenario.Quantity)
	outs := make([]Outcome, r.Options.Copies)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range outs {
		copyOf := in
		copyOf.Number = i + 1
		c := r.Stage.Browser(TokenAda, nil)
		wg.Go(func() {
			<-start
			outs[i] = c.Book(ctx, copyOf)
		})
	}
	close(start)
	wg.Wait()
	return outs, nil
}
