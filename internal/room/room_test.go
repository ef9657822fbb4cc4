package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// sink collects what SendAll delivered to one attendee.
type sink chan any

func (s sink) send(msg any) { s <- msg }

func join(t *testing.T, r *Room, name string) (*Seat, sink) {
	t.Helper()
	in := make(sink, 16)
	s, err := r.Join(name, "192.0.2.1:50000", 80, 24, in.send)
	if err != nil {
		t.Fatalf("Join(%q): %v", name, err)
	}
	return s, in
}

func TestJoinNamesAreSafeUniqueAndKeptForTheReturn(t *testing.T) {
	r := New(3)
	for _, tc := range []struct{ given, want string }{
		{"ada", "ada"},
		{"ada", "ada-2"}, // ada is connected
		{"\x1b]0;pwned\x07bob\r\n", "0pwnedbob"},
	} {
		s, _ := join(t, r, tc.given)
		if s.Name() != tc.want {
			t.Errorf("Join(%q) seats %q, want %q", tc.given, s.Name(), tc.want)
		}
	}
	if _, err := r.Join("eve", "", 80, 24, func(any) {}); !errors.As(err, new(*FullError)) {
		t.Errorf("a fourth attendee in a room of 3: %v, want a *FullError", err)
	}
	snap := r.Snapshot(10)
	ada := snap.Attendees[0]
	if ada.Name != "ada" || !ada.Connected {
		t.Fatalf("first attendee %+v", ada)
	}
	first := r.byName["ada"]
	first.Answered(quiz.SetCheckpoint, "checkpoint/3", []int{1}, 1)
	p := progress.NewProgress()
	p.MarkRead("idempotency", time.Unix(0, 0))
	first.Keep(p)
	first.Leave("quit")
	back, _ := join(t, r, "ada")
	if back != first || !back.Progress().IsRead("idempotency") {
		t.Errorf("ada's return got another seat (%v) or lost the progress kept", back != first)
	}
	if got := attendee(t, r.Snapshot(0), "ada").Checkpoint; got.Answered != 1 {
		t.Errorf("ada's checkpoint after her return: %+v, want the answer she gave before", got)
	}
	r.End()
	if _, err := r.Join("late", "", 80, 24, func(any) {}); !errors.Is(err, ErrEnded) {
		t.Errorf("Join after End: %v, want ErrEnded", err)
	}
}

func attendee(t *testing.T, snap Snapshot, name string) Attendee {
	t.Helper()
	for _, a := range snap.Attendees {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no attendee %q in %+v", name, snap.Attendees)
	return Attendee{}
}

func TestSendAllDeliversInOrderToThoseConnected(t *testing.T) {
	r := New(5)
	_, a := join(t, r, "a")
	gone, _ := join(t, r, "b")
	gone.Leave("idle")
	if n := r.SendAll("one", "sent everyone to one"); n != 1 {
		t.Errorf("SendAll reached %d, want 1 (b left)", n)
	}
	r.SendAll("two", "")
	if got := []any{<-a, <-a}; !slices.Equal(got, []any{"one", "two"}) {
		t.Errorf("a got %v, want one then two", got)
	}
	feed := r.Snapshot(FeedSize).Feed
	if last := feed[len(feed)-1].Text; last != "sent everyone to one (1 attendee)" {
		t.Errorf("the feed ends %q", last)
	}
}

func TestPollCountsTheRoomsAnswers(t *testing.T) {
	checkpoint := quiz.Checkpoint()
	var single, multiple, short quiz.Question
	for _, q := range checkpoint.Questions {
		switch q.Kind {
		case quiz.KindSingle:
			single = q
		case quiz.KindMultiple:
			multiple = q
		case quiz.KindShort:
			short = q
		}
	}
	r := New(10)
	ada, _ := join(t, r, "ada")
	ben, _ := join(t, r, "ben")
	join(t, r, "cy")
	if r.Snapshot(0).Poll != nil {
		t.Fatal("a poll before any answer or open question")
	}
	wrong := (single.Correct[0] + 1) % len(single.Choices)
	ada.Answered(quiz.SetCheckpoint, single.ID, single.Correct, 1)
	ben.Answered(quiz.SetCheckpoint, single.ID, []int{wrong}, 0)
	p := r.Snapshot(0).Poll
	if p == nil || p.Question != single.ID || p.Opened || p.Answered != 2 || !slices.Equal(p.Waiting, []string{"cy"}) {
		t.Fatalf("poll after two answers to %s: %+v", single.ID, p)
	}
	for i, b := range p.Bars {
		want := 0
		if i == single.Correct[0] || i == wrong {
			want = 1
		}
		if b.Count != want || b.Correct != (i == single.Correct[0]) || b.Label == "" {
			t.Errorf("bar %d %+v, want count %d", i, b, want)
		}
	}

	ada.Answered(quiz.SetCheckpoint, multiple.ID, multiple.Correct, 1)
	ben.Answered(quiz.SetCheckpoint, multiple.ID, multiple.Correct[:1], 0.5)
	p = r.Snapshot(0).Poll
	if p.Question != multiple.ID || p.Bars[multiple.Correct[0]].Count != 2 || p.Bars[multiple.Correct[1]].Count != 1 {
		t.Errorf("multiple choice: each pick counts once per attendee: %+v", p.Bars)
	}

	r.OpenPoll(quiz.SetCheckpoint, short.ID)
	ada.Answered(quiz.SetCheckpoint, short.ID, []int{0, 1}, 1)
	ben.Answered(quiz.SetCheckpoint, short.ID, []int{0}, 0.5)
	ada.Answered(quiz.SetCheckpoint, single.ID, single.Correct, 1) // the poll stays on the open question
	p = r.Snapshot(0).Poll
	var counts []int
	for _, b := range p.Bars {
		counts = append(counts, b.Count)
	}
	if !p.Opened || p.Question != short.ID || !slices.Equal(counts, []int{1, 1, 0}) || p.Title != "Checkpoint 1" {
		t.Errorf("opened short answer: %+v, counts %v; want right 1, partly 1, wrong 0", p, counts)
	}
	if title := r.ClosePoll(); title != "Checkpoint 1" {
		t.Errorf("ClosePoll on the open Checkpoint 1 says %q", title)
	}
	cy := r.byName["cy"]
	cy.Answered(quiz.SetCheckpoint, short.ID, []int{0}, 0) // after the close
	snap := r.Snapshot(5)
	if p := snap.Poll; p == nil || p.Opened || !p.Closed || p.Question != short.ID || p.Answered != 2 || p.Bars[2].Count != 0 || !slices.Equal(p.Waiting, []string{"cy"}) {
		t.Errorf("closed poll after cy answered late: %+v, want Checkpoint 1 closed with 2 answered, cy not counted", p)
	}
	if got := attendee(t, snap, "cy").Checkpoint; got.Answered != 1 {
		t.Errorf("cy's late answer is not in her own score: %+v", got)
	}
	if last := snap.Feed[len(snap.Feed)-2].Text; last != "closed the poll on Checkpoint 1: 2 answered" {
		t.Errorf("the feed before cy's answer: %q, want the close", last)
	}
	if title := r.ClosePoll(); title != "" {
		t.Errorf("closing a closed poll again: %q, want nothing to close", title)
	}
	r.OpenPoll("checkpoint", "no-such-question")
	if p := r.Snapshot(0).Poll; p.Opened {
		t.Errorf("an unknown question opened the poll: %+v", p)
	}

	snap = r.Snapshot(0)
	if got := snap.Attendees[1].Checkpoint; got.Answered != 3 || got.Of != 5 || got.Points != 1 {
		t.Errorf("ben's checkpoint %+v, want 3 of 5 answered, 0 + 0.5 + 0.5 points", got)
	}
}

func TestSummaryHoldsEveryAttendee(t *testing.T) {
	r := New(10)
	ada, _ := join(t, r, "ada")
	join(t, r, "ben")
	ada.Where("Checkpoint", progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2})
	ada.Answered(quiz.SetBreakIt, quiz.BreakIt().Questions[0].ID, []int{0}, 1)
	p := progress.NewProgress()
	p.Record(quiz.SetBreakIt, quiz.BreakIt().Questions[0].ID, 1, time.Unix(5, 0))
	ada.Keep(p)
	ada.Leave("quit")
	data, err := json.Marshal(r.Summary(time.Unix(100, 0)))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Attendees) != 2 {
		t.Fatalf("summary of %d attendees, want 2", len(back.Attendees))
	}
	a := back.Attendees[0]
	var kept progress.Progress
	if err := json.Unmarshal(a.Progress, &kept); err != nil || kept.Sets[quiz.SetBreakIt] == nil {
		t.Errorf("ada's progress in the summary: %v, %s", err, a.Progress)
	}
	if a.Name != "ada" || a.LastScreen != "Checkpoint" || a.Scores[quiz.SetBreakIt] != (SummaryScore{Answered: 1, Of: 6, Score: 1}) || len(a.Answers) != 1 || a.LastLeft.IsZero() {
		t.Errorf("ada in the summary: %+v", a)
	}
	if b := back.Attendees[1]; b.Progress != nil || b.Scores[quiz.SetCheckpoint].Of != 5 {
		t.Errorf("ben in the summary: %+v", b)
	}
}

func TestChangedSaysTheRoomChanged(t *testing.T) {
	r := New(2)
	s, _ := join(t, r, "ada")
	<-r.Changed() // the join
	s.Resize(120, 40, false)
	<-r.Changed()
	if a := r.Snapshot(0).Attendees[0]; a.Width != 120 || a.Height != 40 {
		t.Errorf("after Resize: %dx%d", a.Width, a.Height)
	}
	s.Resize(120, 40, false) // no change, no signal
	select {
	case <-r.Changed():
		t.Error("Changed signalled though nothing changed")
	default:
	}
}

// The counts in the room's words agree with their nouns: a room of one.
func TestFullRoomOfOneSaysSoInTheSingular(t *testing.T) {
	r := New(1)
	join(t, r, "ada")
	_, err := r.Join("ben", "192.0.2.2:50000", 80, 24, func(any) {})
	if got, want := fmt.Sprint(err), "the room is full: 1 attendee is connected, the most this workshop takes"; got != want {
		t.Errorf("Join over the limit: %q, want %q", got, want)
	}
	feed := r.Snapshot(FeedSize).Feed
	if got, want := feed[len(feed)-1].Text, "ben was turned away: the room is full (1 attendee at once)"; got != want {
		t.Errorf("the feed ends %q, want %q", got, want)
	}
}

// SummaryChanged is signalled after every change of what the summary
// holds, progress kept included (which the dashboard does not show), and
// independently of Changed: a dashboard draining Changed takes nothing
// from whoever keeps the summary.
func TestSummaryChangedSaysWhatTheSummaryHoldsChanged(t *testing.T) {
	r := New(2)
	drained := func(c <-chan struct{}) {
		select {
		case <-c:
		default:
		}
	}
	s, _ := join(t, r, "ada")
	<-r.Changed() // the dashboard takes its signal…
	<-r.SummaryChanged()
	drained(r.Changed())
	s.Keep(progress.NewProgress())
	select {
	case <-r.SummaryChanged():
	default:
		t.Error("keeping an attendee's progress did not signal SummaryChanged")
	}
	// In this order: nobody joins a room that has ended (a map's random
	// order put the end before the join one run in five or so).
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"an answer", func() { s.Answered(quiz.SetCheckpoint, quiz.Checkpoint().Questions[0].ID, []int{0}, 1) }},
		{"a screen", func() { s.Where("Race", progress.Place{Page: progress.PageRace}) }},
		{"a leave", func() { s.Leave("quit") }},
		{"another join", func() { join(t, r, "ben") }},
		{"the end", r.End},
	} {
		name, change := c.name, c.change
		drained(r.SummaryChanged())
		change()
		select {
		case <-r.SummaryChanged():
		default:
			t.Errorf("%s did not signal SummaryChanged", name)
		}
	}
	if sum := r.Summary(time.Time{}); !sum.Ended.IsZero() || len(sum.Attendees) != 2 {
		t.Errorf("the summary while running: %+v", sum)
	}
	b, err := json.Marshal(r.Summary(time.Time{}))
	if err != nil || strings.Contains(string(b), `"ended"`) {
		t.Errorf("a summary not ended says ended: %s (%v)", b, err)
	}
}
