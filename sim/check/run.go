package check

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/proxy"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Options shape one check.
type Options struct {
	// Copies is how many copies concurrent-copies sends at once; 0 is
	// sim.DefaultCopies.
	Copies int
	// DatabaseURL is the API's database, for Config.Database's SQL.
	DatabaseURL string
	// Only runs the named scenarios, in the check's order; nil runs all.
	Only []string
	// Backoff is the client's waits before its second and third tries;
	// nil is Backoff. The client waits at least an answer's Retry-After,
	// up to RetryAfterCap (0: client.MaxRetryAfter).
	Backoff       []time.Duration
	RetryAfterCap time.Duration
	// Timeout bounds each try; a try that takes longer got no answer. 0
	// is 10 s.
	Timeout time.Duration
	// Done, when set, is told each row as soon as it is known.
	Done func(Row)
	// Harness says the API is learn's exercise harness, which obeys
	// proxy.HeaderFault: the scenarios of HarnessNames run too. Its
	// other requests (events, seats, bookings read back) are the
	// harness's: a row in which no booking was answered stops the rest,
	// even though they answer.
	Harness bool
	// Trace, when set, is the trace the run's clients emit their steps
	// into (a gated one, for a screen that plays the run), and the tries
	// of a learner's client are steps in it as they reach learn's proxy;
	// each race is run once, not round after round. The caller closes it.
	Trace *trace.Trace
}

// Backoff is the check's client's waits: the lesson's rule (at most 3
// tries, retry only network errors and 5xx) at a tenth of the lesson's
// waits, since the API cannot tell how long a client waited.
var Backoff = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}

// Run runs the check's scenarios (opts.Only, or all) against the API cfg
// describes, one after another, and judges each. Its error is for a check
// that could not start (the API's database unreachable); a scenario that
// cannot run is a row that says why.
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Copies == 0 {
		opts.Copies = sim.DefaultCopies
	}
	if opts.Copies < sim.MinCopies || opts.Copies > sim.MaxCopies {
		return nil, fmt.Errorf("copies must be from %d to %d, got %d", sim.MinCopies, sim.MaxCopies, opts.Copies)
	}
	if opts.Backoff == nil {
		opts.Backoff = Backoff
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	todo := slices.DeleteFunc(slices.Clone(scenarios), func(s scenario) bool { return s.harness && !opts.Harness })
	if opts.Only != nil {
		for _, name := range opts.Only {
			if _, err := lookup(name, opts.Harness); err != nil {
				return nil, err
			}
		}
		todo = slices.DeleteFunc(todo, func(s scenario) bool { return !slices.Contains(opts.Only, s.name) })
	}
	rd, err := newReader(ctx, cfg, &http.Client{Timeout: opts.Timeout}, opts.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer rd.close()
	res := &Result{Rows: []Row{}, CannotSee: CannotSee}
	counts := map[State]int{}
	silent := "" // the title of the first row in which the API gave no answer at all
	stop := ""   // why no scenario can be judged
	if cfg.Event.Create == nil {
		if left, ok, err := rd.seatsLeft(ctx, cfg.Event.ID); err == nil && ok && left < seatsNeeded(todo) {
			stop = fmt.Sprintf("could not run: event %d has %d seats left, and these scenarios take %d of it from an API that books each intent once (more from one that does not): give an event with at least %d seats, or [event.create]", cfg.Event.ID, left, seatsNeeded(todo), seatsNeeded(todo))
		}
	}
	if stop == "" {
		if why := readBack(ctx, cfg, rd, opts); why != "" {
			stop = "could not run: " + why
		}
	}
	for _, s := range todo {
		var row Row
		blank := Row{Name: s.name, Title: s.title, Sends: s.sends, Power: s.power, State: Error, Failed: []string{}, NotChecked: []string{}, Passages: []Passage{}}
		if stop != "" && cannotRun(cfg, s) == "" {
			row = blank
			row.Says = stop
		} else if silent != "" && cannotRun(cfg, s) == "" {
			row = blank
			row.Says = "could not run: the API gave no answer in " + silent
		} else {
			row = runOne(ctx, cfg, rd, s, opts)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if row.State == Error && row.answered == 0 && (!rd.answered || opts.Harness) && silent == "" {
			silent = s.title
		}
		counts[row.State]++
		res.Rows = append(res.Rows, row)
		if opts.Done != nil {
			opts.Done(row)
		}
	}
	res.Failed = counts[Fail] + counts[Error]
	var said []string
	for _, st := range []State{Pass, Fail, NotChecked, NotRun, Error} {
		if n := counts[st]; n > 0 {
			said = append(said, fmt.Sprintf("%d %s", n, st.Mark()))
		}
	}
	res.Summary = fmt.Sprintf("%s: %s", english.Plural(len(res.Rows), "scenario", ""), strings.Join(said, ", "))
	res.Passed = counts[Pass]
	if res.Passed == 0 && len(res.Rows) > 0 {
		res.Summary += ": none passed, so nothing was shown to hold"
	}
	res.Took = time.Since(start).Round(time.Millisecond).String()
	return res, nil
}

// run is one scenario's run: its event, its proxies (one per base URL)
// and its clients' trace.
type run struct {
	cfg    *Config
	opts   Options
	event  int64
	copies int
	rd     *reader
	// events are the run's events, the first r.event; seatsBefore their
	// seats at the start, summed.
	events      []int64
	seatsBefore int
	proxies     []*api.Instance // the proxies, as the client picks them
	pxs         []*proxy.Proxy
	plan        func(trace.Attempt) proxy.Fault
	trace       *trace.Trace
	// other sends every try after the first to the second base URL.
	other bool
	// apart says why the two base URLs are not one API, seen during the
	// run (sharedState); unverified, that nothing could show whether
	// they are.
	apart      string
	unverified bool

	// learner says the scenario's client is the learner's (learnerBook):
	// its tries carry no request id, so the proxy numbers them (tries).
	learner bool
	// waits are the learner's client's waits before its retries, by try
	// (learnerBook).
	waits map[sim.TryRef]time.Duration
	tries atomic.Int32

	mu         sync.Mutex
	transports []*http.Transport // the clients', closed when the run ends
	carried    []proxy.Passage   // what the proxies carried, in order
}

// runOne runs scenario s and judges it: once, or, for a race, round
// after round until one fails or s.rounds have held (a race a black box
// cannot force is run often enough to show).
func runOne(ctx context.Context, cfg *Config, rd *reader, s scenario, opts Options) Row {
	rounds := max(s.rounds, 1)
	if opts.Trace != nil {
		rounds = 1 // played: one round, on screen
	}
	for i := 1; ; i++ {
		row := runRound(ctx, cfg, rd, s, opts)
		if rounds == 1 || ctx.Err() != nil || row.State == NotRun {
			return row
		}
		if row.State != Pass || i == rounds {
			row.Round = i
			switch {
			case row.State == Pass:
				row.Says = fmt.Sprintf("%d rounds, each held: %s", rounds, row.Says)
			case row.State == Fail || i > 1:
				row.Says = fmt.Sprintf("round %d of %d: %s", i, rounds, row.Says)
			}
			return row
		}
	}
}

// runRound runs scenario s once and judges it.
func runRound(ctx context.Context, cfg *Config, rd *reader, s scenario, opts Options) Row {
	row := Row{Name: s.name, Title: s.title, Sends: s.sends, Power: s.power, Failed: []string{}, NotChecked: []string{}, Passages: []Passage{}}
	notRun := func(why string) Row {
		row.State, row.Says = NotRun, why
		return row
	}
	failed := func(why string) Row {
		row.State, row.Says = Error, cut(why, 300)
		return row
	}
	if why := cannotRun(cfg, s); why != "" {
		return notRun(why)
	}
	lesson, err := sim.Lookup(s.lesson)
	if err != nil {
		return failed(err.Error())
	}
	r := &run{cfg: cfg, opts: opts, rd: rd, copies: opts.Copies, trace: opts.Trace, other: s.instances == 2}
	if r.trace == nil {
		r.trace = trace.New(clock.Real{}, trace.Options{})
		defer r.trace.Close()
	}
	seats := s.seats
	if seats == 0 {
		seats = 2 * opts.Copies
	}
	r.event = cfg.Event.ID
	if cfg.Event.Create != nil {
		if r.event, err = rd.addEvent(ctx, seats); err != nil {
			return failed("could not run: " + err.Error())
		}
	}
	before, seesSeats, err := rd.seatsLeft(ctx, r.event)
	if err != nil {
		return failed("could not run: " + err.Error())
	}
	r.events, r.seatsBefore = []int64{r.event}, before
	if why := sameAPI(ctx, cfg, rd, s, r.event, before, seesSeats); why != "" {
		return failed(why)
	}

	// The proxies: one per base URL, each a lane of the run.
	var proxies []*proxy.Proxy
	defer func() {
		for _, p := range proxies {
			_ = p.Close()
		}
	}()
	for i, u := range cfg.URLs {
		lane := trace.LaneAPI(i + 1)
		p, err := proxy.New(u)
		if err != nil {
			return failed("could not run: " + err.Error())
		}
		p.Plan = func(req *http.Request, _ []byte) proxy.Fault {
			if r.learner && req.Header.Get(api.HeaderRequestID) == "" {
				// The learner's client numbers nothing: each try through
				// the proxy is the next of intent 1, for the plan, the
				// passages and the harness's statements.
				req.Header.Set(api.HeaderRequestID, fmt.Sprintf("1.%d", r.tries.Add(1)))
			}
			at, ok := api.ParseRequestID(req.Header.Get(api.HeaderRequestID))
			fault := proxy.Deliver
			if ok && r.plan != nil {
				fault = r.plan(at)
			}
			if ok && r.learner && opts.Trace != nil {
				// The learner's client emits nothing: its try is a step
				// as it reaches learn's proxy.
				text := fmt.Sprintf("your client's try %d reaches learn's proxy, which will %s", at.Try, fault)
				_ = r.trace.Emit(req.Context(), trace.Event{Kind: trace.KindSend, From: trace.LaneBrowser, To: lane, Intent: at.Intent, Copy: at.Copy, Try: at.Try,
					EventID: r.event, Label: text, Text: text})
			}
			return fault
		}
		if opts.Trace != nil {
			p.Kept = func(ctx context.Context, ps proxy.Passage) { r.answered(ctx, lane, ps) }
		}
		base, err := p.Start()
		if err != nil {
			return failed("could not run: learn's proxy could not listen: " + err.Error())
		}
		proxies = append(proxies, p)
		r.pxs = append(r.pxs, p)
		r.proxies = append(r.proxies, &api.Instance{Name: trace.LaneAPI(i + 1), URL: base})
	}

	outcomes, err := s.run(ctx, r)
	for _, t := range r.transports {
		t.CloseIdleConnections()
	}
	var all []carried
	for i, p := range proxies {
		for _, ps := range p.Passages() {
			all = append(all, carried{r.proxies[i].Name, ps})
		}
	}
	slices.SortStableFunc(all, func(a, b carried) int { return a.ps.At.Compare(b.ps.At) })
	for _, c := range all {
		row.Passages = append(row.Passages, passageOf(c.lane, cfg, c.ps))
		r.carried = append(r.carried, c.ps)
		if len(c.ps.Answers) > 0 && c.ps.Answers[0].Err == nil {
			row.answered++
		}
	}
	if ctx.Err() != nil {
		return row
	}
	if err != nil {
		return failed("could not run: " + err.Error())
	}
	if r.apart != "" {
		return failed(r.apart)
	}
	if why := r.unbooked(); why != "" && !s.refused {
		return failed(why)
	}
	// The learner's client giving up is what its rows judge.
	if why := unanswered(cfg, outcomes, row.Passages); why != "" && !s.lost && !r.learner {
		return failed(why)
	}
	if why := strangerAnswered(cfg, s, row.Passages); why != "" {
		return failed(why)
	}
	if s.instances == 2 {
		// An API that names its instance on each answer (learn serve's
		// X-Learn-Instance) shows when both base URLs reach one: a front
		// door and the instance behind it.
		seen := map[string]string{}
		for _, c := range all {
			for _, a := range c.ps.Answers {
				if name := a.Header.Get(api.HeaderInstance); name != "" {
					seen[c.lane] = name
				}
			}
		}
		if a, b := seen[trace.LaneAPI(1)], seen[trace.LaneAPI(2)]; a != "" && a == b {
			return failed(fmt.Sprintf("could not run: both base URLs were answered by one API instance (%s: %s at each), so the retry did not land on another: give the addresses of two instances of one API (not a front door and one behind it)", api.HeaderInstance, cut(a, 40)))
		}
	}

	f := sim.Facts{Outcomes: outcomes, Users: map[string]string{}, Unseen: sim.Unseen{Created: true, Design: true}, Tries: len(opts.Backoff) + 1,
		ServerErrors: serverErrors(all)}
	if r.learner {
		f.Waits, f.Backoff = r.waits, opts.Backoff
	}
	for _, u := range cfg.Users {
		f.Users[u.Name] = u.UserID()
	}
	var keys, answered []string
	for _, o := range outcomes {
		keys = append(keys, o.Intent.Key.String())
		for _, t := range o.Tries {
			if t.Key != "" {
				keys = append(keys, t.Key)
			}
			if t.BookingID != "" {
				answered = append(answered, t.BookingID)
			}
		}
	}
	rows, seesRows, err := rd.bookings(ctx, slices.Compact(slices.Sorted(slices.Values(keys))), answered)
	if err != nil {
		return failed("not judged: " + err.Error())
	}
	f.Bookings, f.Unseen.Rows = rows, !seesRows
	f.Unseen.Seats = !seesSeats
	f.SeatsAtStart = r.seatsBefore
	for i, ev := range r.events {
		after, _, err := rd.seatsLeft(ctx, ev)
		if err != nil {
			return failed("not judged: " + err.Error())
		}
		f.SeatsLeft += after
		if i == 0 || after < f.LowestSeatsLeft {
			f.LowestSeatsLeft = after
		}
	}

	rep := sim.ReportOf(lesson, f)
	rep.Scenario = s.name
	row.Report = rep
	row.Judged = &Judged{Attempts: rep.Attempts, Bookings: rep.Bookings, BookingRows: rep.BookingRows, SeatsTaken: rep.SeatsTaken,
		Invariants: rep.Invariants, Verdict: rep.Verdict}
	v := rep.Verdict
	for _, inv := range v.Failed {
		row.Failed = append(row.Failed, inv.Name)
	}
	for _, inv := range v.NotChecked {
		row.NotChecked = append(row.NotChecked, inv.Name)
	}
	row.Says = v.Says
	switch {
	case s.power:
		row.State, row.Says = powerOf(row)
	case r.unverified && slices.Contains(row.Failed, sim.InvAnswerStored):
		// The second base URL answered a booking the database read does
		// not hold, and nothing read through it showed it shares that
		// database: the config's, as likely as the API's.
		row.State = Error
		row.Says = "could not judge: the second base URL answered a booking that the database the check reads does not hold, and the config reads nothing through it ([seats] or [bookings]): are both urls instances of one API, over that database?"
	case len(row.Failed) > 0:
		row.State = Fail
	case len(row.NotChecked) > 0:
		row.State = NotChecked
		row.Says += " (the config gives no way to read them: [bookings] and [seats], or [database])"
	case r.unverified:
		row.State = NotChecked
		row.NotChecked = append(row.NotChecked, notShownShared)
		row.Says = "not checked: nothing showed that the two base URLs are one API (the config reads nothing through the second: give [seats] or [bookings]); " + row.Says
	default:
		row.State = Pass
		if s.held != "" {
			row.Says = s.held
		}
	}
	return row
}

// powerOf is the state of the power row: the broken client must have
// booked twice, and the judge must have seen it.
func powerOf(row Row) (State, string) {
	switch {
	case slices.Contains(row.Failed, sim.InvOneBookingPerIntent):
		return Pass, "the broken client booked twice, as it must, and the check saw it: it was " + row.Says
	case slices.Contains(row.NotChecked, sim.InvOneBookingPerIntent):
		return NotChecked, row.Says
	}
	return Fail, "the client that makes a new key per try booked only once: the check cannot see the double booking it exists to find (do [bookings] or [database] read every booking?), or the API deduplicates by something other than the key"
}

// addEvent adds one more event with seats seats, for a scenario that
// books two, and counts its seats in.
func (r *run) addEvent(ctx context.Context, seats int) (int64, error) {
	id, err := r.rd.addEvent(ctx, seats)
	if err != nil {
		return 0, err
	}
	n, _, err := r.rd.seatsLeft(ctx, id)
	if err != nil {
		return 0, err
	}
	r.events, r.seatsBefore = append(r.events, id), r.seatsBefore+n
	return id, nil
}
