package quiz

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

var (
	single = Question{ID: "t/single", Kind: KindSingle, Choices: []string{"a", "b", "c"}, Correct: []int{1}}
	multi  = Question{ID: "t/multi", Kind: KindMultiple, Choices: []string{"a", "b", "c", "d", "e"}, Correct: []int{0, 2, 3}}
	order  = Question{ID: "t/order", Kind: KindOrder, Steps: []Step{
		{"B", "A", "one"}, {"A", "A", "two"}, {"A", "B", "three"}, {"B", "A", "four"},
	}}
	short = Question{ID: "t/short", Kind: KindShort, Model: "m", Points: []string{"p1", "p2", "p3", "p4"},
		Cues: []Cue{{{"alpha"}}, {{"beta"}}, {{"gamma"}}, {{"delta"}}}}
	live = Question{ID: "t/live", Kind: KindLive, Choices: []string{"c0", "c1", "c2"}, Correct: []int{2},
		Live: &Live{Where: []string{"w0", "w1", "w2", "w3"}, WhereCorrect: 1}}
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestGradeChoice(t *testing.T) {
	tests := []struct {
		name    string
		q       Question
		picked  []int
		score   float64
		correct bool
		missed  []string
		err     error
	}{
		{"single right", single, []int{1}, 1, true, nil, nil},
		{"single wrong", single, []int{0}, 0, false, []string{"b"}, nil},
		{"single none", single, nil, 0, false, nil, ErrInvalidAnswer},
		{"single two", single, []int{1, 2}, 0, false, nil, ErrInvalidAnswer},
		{"single out of range", single, []int{3}, 0, false, nil, ErrInvalidAnswer},
		{"single negative", single, []int{-1}, 0, false, nil, ErrInvalidAnswer},
		{"multi exact", multi, []int{0, 2, 3}, 1, true, nil, nil},
		{"multi exact any order", multi, []int{3, 0, 2}, 1, true, nil, nil},
		{"multi two of three", multi, []int{0, 3}, 2.0 / 3, false, []string{"c"}, nil},
		{"multi all right plus one wrong", multi, []int{0, 2, 3, 4}, 2.0 / 3, false, nil, nil},
		{"multi one right one wrong", multi, []int{0, 1}, 0, false, []string{"c", "d"}, nil},
		{"multi everything", multi, []int{0, 1, 2, 3, 4}, 1.0 / 3, false, nil, nil},
		{"multi only wrong", multi, []int{1, 4}, 0, false, []string{"a", "c", "d"}, nil},
		{"multi none", multi, []int{}, 0, false, []string{"a", "c", "d"}, nil},
		{"multi repeated", multi, []int{0, 0}, 0, false, nil, ErrInvalidAnswer},
		{"multi out of range", multi, []int{5}, 0, false, nil, ErrInvalidAnswer},
		{"order question", order, []int{0}, 0, false, nil, ErrWrongKind},
		{"live question", live, []int{2}, 0, false, nil, ErrWrongKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := GradeChoice(tt.q, tt.picked)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Score, tt.score) || r.Correct != tt.correct || !slices.Equal(r.Missed, tt.missed) {
				t.Errorf("got score %v correct %v missed %q, want %v %v %q", r.Score, r.Correct, r.Missed, tt.score, tt.correct, tt.missed)
			}
		})
	}
}

func TestGradeOrder(t *testing.T) {
	tests := []struct {
		name      string
		q         Question
		order     []int
		score     float64
		positions []bool
		missed    []string
		err       error
	}{
		{"right", order, []int{0, 1, 2, 3}, 1, []bool{true, true, true, true}, nil, nil},
		{"two swapped", order, []int{1, 0, 2, 3}, 0.5, []bool{false, false, true, true}, []string{"1. B → A: one", "2. A: two"}, nil},
		{"reversed", order, []int{3, 2, 1, 0}, 0, []bool{false, false, false, false}, []string{"1. B → A: one", "2. A: two", "3. A → B: three", "4. B → A: four"}, nil},
		{"rotated", order, []int{1, 2, 3, 0}, 0, []bool{false, false, false, false}, nil, nil},
		{"last two swapped", order, []int{0, 1, 3, 2}, 0.5, []bool{true, true, false, false}, nil, nil},
		{"too short", order, []int{0, 1, 2}, 0, nil, nil, ErrInvalidAnswer},
		{"too long", order, []int{0, 1, 2, 3, 3}, 0, nil, nil, ErrInvalidAnswer},
		{"repeated", order, []int{0, 0, 2, 3}, 0, nil, nil, ErrInvalidAnswer},
		{"out of range", order, []int{0, 1, 2, 4}, 0, nil, nil, ErrInvalidAnswer},
		{"negative", order, []int{-1, 1, 2, 3}, 0, nil, nil, ErrInvalidAnswer},
		{"choice question", single, []int{0}, 0, nil, nil, ErrWrongKind},
		{
			"identical steps may swap",
			Question{ID: "t/dup", Kind: KindOrder, Steps: []Step{{"A", "B", "x"}, {"A", "B", "x"}, {"B", "A", "y"}}},
			[]int{1, 0, 2}, 1, []bool{true, true, true}, nil, nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := GradeOrder(tt.q, tt.order, nil)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Score, tt.score) || !slices.Equal(r.Positions, tt.positions) || r.Correct != (tt.score == 1) {
				t.Errorf("got score %v positions %v correct %v, want %v %v", r.Score, r.Positions, r.Correct, tt.score, tt.positions)
			}
			if tt.missed != nil && !slices.Equal(r.Missed, tt.missed) {
				t.Errorf("missed %q, want %q", r.Missed, tt.missed)
			}
		})
	}
}

// A short answer is graded by the ticks checked against the typed text: a
// ticked point the text mentions is worth 1, one it does not mention half,
// one not ticked nothing.
func TestGradeShort(t *testing.T) {
	const all = "alpha, beta, gamma and delta"
	tests := []struct {
		name   string
		q      Question
		typed  string
		ticked []bool
		score  float64
		missed []string
		unsaid []string
		err    error
	}{
		{"all said and ticked", short, all, []bool{true, true, true, true}, 1, nil, nil, nil},
		{"none ticked", short, all, []bool{false, false, false, false}, 0, []string{"p1", "p2", "p3", "p4"}, nil, nil},
		{"three of four ticked", short, all, []bool{true, false, true, true}, 0.75, []string{"p2"}, nil, nil},
		{"all ticked, nothing said", short, "it retries", []bool{true, true, true, true}, 0.5, nil, []string{"p1", "p2", "p3", "p4"}, nil},
		{"all ticked, two said", short, "Alpha; and then GAMMA.", []bool{true, true, true, true}, 0.75, nil, []string{"p2", "p4"}, nil},
		{"all ticked, nothing typed", short, "", []bool{true, true, true, true}, 0.5, nil, []string{"p1", "p2", "p3", "p4"}, nil},
		{"said but not ticked", short, all, []bool{false, true, true, true}, 0.75, []string{"p1"}, nil, nil},
		{"too few ticks", short, all, []bool{true}, 0, nil, nil, ErrInvalidAnswer},
		{"too many ticks", short, all, []bool{true, true, true, true, true}, 0, nil, nil, ErrInvalidAnswer},
		{"no ticks", short, all, nil, 0, nil, nil, ErrInvalidAnswer},
		{"choice question", single, all, []bool{true}, 0, nil, nil, ErrWrongKind},
		{"no cues", Question{ID: "t/nocues", Kind: KindShort, Model: "m", Points: []string{"p"}}, all, []bool{true}, 0, nil, nil, ErrWrongKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := GradeShort(tt.q, tt.typed, tt.ticked)
			if tt.name == "too few ticks" && (err == nil || !strings.HasSuffix(err.Error(), "the checklist has 4 points, got 1 tick")) {
				t.Errorf("err = %v, want it to say 4 points and 1 tick", err)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Score, tt.score) || r.Correct != (tt.score == 1) || !slices.Equal(r.Missed, tt.missed) || !slices.Equal(r.Unsaid, tt.unsaid) {
				t.Errorf("got %+v, want score %v missed %q unsaid %q", r, tt.score, tt.missed, tt.unsaid)
			}
		})
	}
}

// A drill answer typed is checked like a short answer; one given aloud
// (nothing typed) is graded by the ticks alone.
func TestGradeSpoken(t *testing.T) {
	p := SpokenPrompt{ID: "t/spoken", Points: []string{"a", "b"}, Cues: []Cue{{{"alpha"}}, {{"beta"}}}}
	for _, tt := range []struct {
		typed  string
		ticked []bool
		score  float64
	}{
		{"", []bool{true, false}, 0.5},
		{"  \n", []bool{true, true}, 1}, // white space is nothing typed
		{"alpha", []bool{true, true}, 0.75},
		{"alpha beta", []bool{true, true}, 1},
		{"it retries", []bool{true, true}, 0.5},
	} {
		r, err := GradeSpoken(p, tt.typed, tt.ticked)
		if err != nil || !near(r.Score, tt.score) || r.Correct != (tt.score == 1) {
			t.Errorf("GradeSpoken(%q, %v) = %+v, %v; want score %v", tt.typed, tt.ticked, r, err, tt.score)
		}
	}
	if _, err := GradeSpoken(p, "", []bool{true}); !errors.Is(err, ErrInvalidAnswer) {
		t.Errorf("one tick for two points: err = %v", err)
	}
	if _, err := GradeSpoken(SpokenPrompt{ID: "t/none"}, "", nil); !errors.Is(err, ErrWrongKind) {
		t.Errorf("no points: err = %v", err)
	}
}

func TestGradeLive(t *testing.T) {
	tests := []struct {
		name         string
		q            Question
		cause, where int
		score        float64
		missed       []string
		err          error
	}{
		{"both right", live, 2, 1, 1, nil, nil},
		{"cause only", live, 2, 0, 0.5, []string{"w1"}, nil},
		{"where only", live, 0, 1, 0.5, []string{"c2"}, nil},
		{"both wrong", live, 1, 3, 0, []string{"c2", "w1"}, nil},
		{"cause out of range", live, 3, 1, 0, nil, ErrInvalidAnswer},
		{"cause negative", live, -1, 1, 0, nil, ErrInvalidAnswer},
		{"where out of range", live, 2, 4, 0, nil, ErrInvalidAnswer},
		{"where negative", live, 2, -1, 0, nil, ErrInvalidAnswer},
		{"not live", single, 0, 0, 0, nil, ErrWrongKind},
		{"live without Live", Question{ID: "t/x", Kind: KindLive, Choices: []string{"a"}, Correct: []int{0}}, 0, 0, 0, nil, ErrWrongKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := GradeLive(tt.q, tt.cause, tt.where)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Score, tt.score) || r.Correct != (tt.score == 1) || !slices.Equal(r.Missed, tt.missed) {
				t.Errorf("got %+v, want score %v missed %q", r, tt.score, tt.missed)
			}
		})
	}
}

// TestGradeRealQuestions grades the right answer of every question of every
// set: each scores 1, and a wrong answer scores less.
func TestGradeRealQuestions(t *testing.T) {
	for _, s := range Sets() {
		for _, q := range s.Questions {
			t.Run(q.ID, func(t *testing.T) {
				var right, wrong Result
				var err1, err2 error
				switch q.Kind {
				case KindSingle, KindMultiple:
					right, err1 = GradeChoice(q, q.Correct)
					other := 0
					for slices.Contains(q.Correct, other) {
						other++
					}
					wrong, err2 = GradeChoice(q, []int{other})
				case KindOrder:
					id := make([]int, len(q.Steps))
					for i := range id {
						id[i] = i
					}
					right, err1 = GradeOrder(q, id, rightFills(q, id))
					wrong, err2 = GradeOrder(q, Shuffle(len(q.Steps), 1), rightFills(q, Shuffle(len(q.Steps), 1)))
				case KindShort:
					right, err1 = GradeShort(q, q.Model, slices.Repeat([]bool{true}, len(q.Points)))
					wrong, err2 = GradeShort(q, q.Model, make([]bool, len(q.Points)))
				case KindLive:
					right, err1 = GradeLive(q, q.Correct[0], q.Live.WhereCorrect)
					wrong, err2 = GradeLive(q, (q.Correct[0]+1)%len(q.Choices), q.Live.WhereCorrect)
				case KindPredict:
					// Graded against the report of a real run: see
					// TestPredictGradesRealRuns in internal/live.
					t.Skip("a predict question is graded against a real run's report (internal/live)")
				default:
					t.Fatalf("unknown kind %q", q.Kind)
				}
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !right.Correct || right.Score != 1 {
					t.Errorf("the right answer scores %+v", right)
				}
				if wrong.Correct || wrong.Score >= 1 {
					t.Errorf("a wrong answer scores %+v", wrong)
				}
			})
		}
	}
}

// rightFills is, for a question with frames, the right pick of every blank
// of the frame at each position of order; nil without frames.
func rightFills(q Question, order []int) [][]int {
	if len(q.Frames) == 0 {
		return nil
	}
	fills := make([][]int, len(order))
	for pos, i := range order {
		for _, b := range q.Frames[i].Blanks {
			fills[pos] = append(fills[pos], b.Right)
		}
	}
	return fills
}

// framed is an order question whose steps 0 and 2 look alike on screen
// (one frame, different blanks), like the redraw's two requests.
var framed = Question{ID: "t/framed", Kind: KindOrder,
	Steps: []Step{{"B", "A", "send x"}, {"A", "A", "work"}, {"B", "A", "send y"}},
	Frames: []Frame{
		{Text: "send {}", Blanks: []Blank{{What: "what", Choices: []string{"x", "y"}, Right: 0}}},
		{Text: "work {} {}", Blanks: []Blank{{What: "status", Choices: []string{"200", "409"}, Right: 0}, {What: "id", Choices: []string{"b1", "b2"}, Right: 1}}},
		{Text: "send {}", Blanks: []Blank{{What: "what", Choices: []string{"x", "y"}, Right: 1}}},
	}}

// An order question with frames scores each position and each blank: the
// positions are graded by how the steps look, the blanks by what belongs
// at their position, and what was missed is said.
func TestGradeOrderWithBlanks(t *testing.T) {
	tests := []struct {
		name      string
		order     []int
		fills     [][]int
		score     float64
		positions []bool
		blanks    [][]bool
		missed    []string
		err       error
	}{
		{"all right", []int{0, 1, 2}, [][]int{{0}, {0, 1}, {1}}, 1, []bool{true, true, true}, [][]bool{{true}, {true, true}, {true}}, nil, nil},
		// The two sends look alike: swapped, their places are right, and
		// the blanks are graded by the position, not by the step.
		{"look-alikes swapped, blanks by position", []int{2, 1, 0}, [][]int{{0}, {0, 1}, {1}}, 1, []bool{true, true, true}, [][]bool{{true}, {true, true}, {true}}, nil, nil},
		{"one blank wrong", []int{0, 1, 2}, [][]int{{0}, {1, 1}, {1}}, 6.0 / 7, []bool{true, true, true}, [][]bool{{true}, {false, true}, {true}},
			[]string{"2. status: 200 (not 409)"}, nil},
		{"the same key twice", []int{0, 1, 2}, [][]int{{0}, {0, 1}, {0}}, 6.0 / 7, []bool{true, true, true}, [][]bool{{true}, {true, true}, {false}},
			[]string{"3. what: y (not x)"}, nil},
		// A step in the wrong place scores nothing for its blanks either.
		{"order wrong", []int{1, 0, 2}, [][]int{{0, 1}, {0}, {1}}, 2.0 / 7, []bool{false, false, true}, [][]bool{{false, false}, {false}, {true}},
			[]string{"1. B → A: send x", "2. A: work"}, nil},
		{"no fills", []int{0, 1, 2}, nil, 0, nil, nil, nil, ErrInvalidAnswer},
		{"a blank left out", []int{0, 1, 2}, [][]int{{0}, {0}, {1}}, 0, nil, nil, nil, ErrInvalidAnswer},
		{"a pick out of range", []int{0, 1, 2}, [][]int{{0}, {0, 2}, {1}}, 0, nil, nil, nil, ErrInvalidAnswer},
		{"an empty blank", []int{0, 1, 2}, [][]int{{-1}, {0, 1}, {1}}, 0, nil, nil, nil, ErrInvalidAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := GradeOrder(framed, tt.order, tt.fills)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.Score, tt.score) || r.Correct != (tt.score == 1) || !slices.Equal(r.Positions, tt.positions) || !slices.EqualFunc(r.Blanks, tt.blanks, slices.Equal) || !slices.Equal(r.Missed, tt.missed) {
				t.Errorf("got score %v correct %v positions %v blanks %v missed %q\nwant %v %v %v %q", r.Score, r.Correct, r.Positions, r.Blanks, r.Missed, tt.score, tt.positions, tt.blanks, tt.missed)
			}
		})
	}
	if _, err := GradeOrder(order, []int{0, 1, 2, 3}, [][]int{{0}}); !errors.Is(err, ErrInvalidAnswer) {
		t.Errorf("fills for a question without blanks: err = %v", err)
	}
}

// GradePredict refuses what cannot be an answer, before any report is read.
func TestGradePredictRefuses(t *testing.T) {
	q := PredictSet().Questions[0]
	four := make([]int, len(q.Predict.Slots))
	for _, tt := range []struct {
		name  string
		q     Question
		picks []int
		err   error
	}{
		{"not a predict question", single, four, ErrWrongKind},
		{"a pick short", q, four[1:], ErrInvalidAnswer},
		{"a pick out of range", q, []int{0, 0, 0, 9}, ErrInvalidAnswer},
		{"no run", q, four, ErrInvalidAnswer},
	} {
		if _, err := GradePredict(tt.q, tt.picks, nil); !errors.Is(err, tt.err) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
		}
	}
}

func TestScore(t *testing.T) {
	if got := Score(nil); got != 0 {
		t.Errorf("Score(nil) = %v", got)
	}
	if got := Score([]Result{{Score: 1}, {Score: 0.5}, {}, {Score: 0.5}}); !near(got, 0.5) {
		t.Errorf("Score = %v, want 0.5", got)
	}
}

func TestShuffle(t *testing.T) {
	for n := 0; n <= 12; n++ {
		for seed := int64(-50); seed < 500; seed++ {
			p := Shuffle(n, seed)
			if len(p) != n {
				t.Fatalf("Shuffle(%d, %d) has %d items", n, seed, len(p))
			}
			sorted := slices.Sorted(slices.Values(p))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("Shuffle(%d, %d) = %v is not a permutation", n, seed, p)
				}
			}
			if n > 1 && isIdentity(p) {
				t.Fatalf("Shuffle(%d, %d) is the identity", n, seed)
			}
			if !slices.Equal(p, Shuffle(n, seed)) {
				t.Fatalf("Shuffle(%d, %d) differs between calls", n, seed)
			}
		}
	}
	// n = 2 has one permutation besides the identity; every seed gives it.
	if p := Shuffle(2, 7); !slices.Equal(p, []int{1, 0}) {
		t.Errorf("Shuffle(2, 7) = %v", p)
	}
	// Different seeds give different orders for a longer list.
	seen := map[string]bool{}
	for seed := range int64(50) {
		seen[fmtInts(Shuffle(6, seed))] = true
	}
	if len(seen) < 20 {
		t.Errorf("50 seeds gave only %d orders of 6 steps", len(seen))
	}
}

func fmtInts(p []int) string {
	b := make([]byte, len(p))
	for i, v := range p {
		b[i] = byte('0' + v)
	}
	return string(b)
}

// isPerm reports whether p is a permutation of 0..n-1.
func isPerm(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	for i, v := range slices.Sorted(slices.Values(p)) {
		if v != i {
			return false
		}
	}
	return true
}

// A retake never shows the order the attempt before it showed: the order
// of two attempts (two seeds) differs, and for more than two items it is
// never the question's own order either.
func TestShowOrderDiffersFromTheAttemptBefore(t *testing.T) {
	for n := 1; n <= 8; n++ {
		for seed := int64(0); seed < 400; seed++ {
			first := ShowOrder(n, seed, nil)
			if !isPerm(first, n) {
				t.Fatalf("ShowOrder(%d, %d, nil) = %v is not a permutation", n, seed, first)
			}
			// Every seed, including the one of the attempt before: a
			// clock that did not move still gives another order.
			for _, next := range []int64{seed, seed + 1, seed * 7919} {
				again := ShowOrder(n, next, first)
				if !isPerm(again, n) {
					t.Fatalf("ShowOrder(%d, %d, %v) = %v is not a permutation", n, next, first, again)
				}
				if n > 1 && slices.Equal(again, first) {
					t.Fatalf("ShowOrder(%d, %d, %v) shows the same order again", n, next, first)
				}
				if n > 2 && isIdentity(again) {
					t.Fatalf("ShowOrder(%d, %d, %v) = %v is the question's own order", n, next, first, again)
				}
			}
		}
	}
}

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(slices.Clone(p))
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

// Under every order the choices can be shown in, picking the positions
// where the right options are shown grades right, and picking any one
// other position grades wrong: grading takes the question's own indices.
func TestPickingTheShownRightOptionGradesRightUnderAnyOrder(t *testing.T) {
	for _, s := range Sets() {
		for _, q := range s.Questions {
			switch q.Kind {
			case KindSingle, KindMultiple, KindLive:
			default:
				continue
			}
			n := 0
			permutations(len(q.Choices), func(p []int) {
				n++
				shown := Shown(p)
				var at []int // the positions the learner points at
				for _, c := range q.Correct {
					at = append(at, shown.Position(c))
				}
				for pos := range shown {
					r, err := gradeAt(q, shown, []int{pos})
					if err != nil {
						t.Fatal(err)
					}
					if want := len(at) == 1 && pos == at[0]; r.Correct != want {
						t.Fatalf("%s shown as %v: position %d (%q) alone grades correct=%v", q.ID, p, pos, q.Choices[shown.Item(pos)], r.Correct)
					}
				}
				r, err := gradeAt(q, shown, at)
				if err != nil || !r.Correct {
					t.Fatalf("%s shown as %v: the right positions %v grade %+v, %v", q.ID, p, at, r, err)
				}
			})
			if n < 24 {
				t.Errorf("%s: only %d orders tried", q.ID, n)
			}
		}
	}
}

// gradeAt grades the picks at positions of a question shown in order shown.
func gradeAt(q Question, shown Shown, positions []int) (Result, error) {
	picks := shown.Items(positions)
	if q.Kind == KindLive {
		return GradeLive(q, picks[0], q.Live.WhereCorrect)
	}
	return GradeChoice(q, picks)
}

// For a key kept outside the row with no constraint behind it, the schema
// is as right a place to look as the key store: both score the place's
// half, and any other place does not.
func TestGradeLiveTakesEveryRightPlace(t *testing.T) {
	for _, id := range []string{"breakit/other-instance", "breakit/redis-ttl"} {
		q, ok := BreakIt().Question(id)
		if !ok {
			t.Fatalf("no question %s", id)
		}
		right := map[int]bool{q.Live.WhereCorrect: true}
		for _, w := range q.Live.WhereAlso {
			right[w] = true
		}
		if !right[placeSchema] || !right[placeKeyStore] {
			t.Errorf("%s: right places %v, want the schema (%d) and the key store (%d)", id, right, placeSchema, placeKeyStore)
		}
		for w := range q.Live.Where {
			r, err := GradeLive(q, q.Correct[0], w)
			if err != nil {
				t.Fatal(err)
			}
			if r.Correct != right[w] {
				t.Errorf("%s: place %q graded correct=%v", id, q.Live.Where[w], r.Correct)
			}
		}
	}
}
