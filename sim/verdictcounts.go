package sim

import (
	"fmt"
	"strings"
)

// The counts of a run that the verdicts' words quote (verdicts.go): the
// answers, keys and tries of its intents, the bookings each created, and
// whose booking each answer carried.

// answeredWithABooking counts the copies (or intents) of r whose last try
// got an answer with a booking.
func answeredWithABooking(r *Report) int {
	n := 0
	for _, a := range r.Attempts {
		if k := len(a.Tries); k > 0 && a.Tries[k-1].BookingID != "" {
			n++
		}
	}
	return n
}

// finalStatusOf is the status of the last answer intent n of r got, as
// "409", or "no answer".
func finalStatusOf(r *Report, n int) string {
	for _, a := range r.Attempts {
		if a.Intent != n {
			continue
		}
		for i := len(a.Tries) - 1; i >= 0; i-- {
			if a.Tries[i].Status != 0 {
				return fmt.Sprint(a.Tries[i].Status)
			}
		}
	}
	return "no answer"
}

// keysSent counts the distinct keys r's tries carried.
func keysSent(r *Report) int {
	keys := map[string]bool{}
	for _, a := range r.Attempts {
		keys[a.Key] = true
		for _, t := range a.Tries {
			if t.Key != "" {
				keys[t.Key] = true
			}
		}
	}
	return len(keys)
}

// triesSent counts every try of r; triesOf those of intent n.
func triesSent(r *Report) int {
	n := 0
	for _, a := range r.Attempts {
		n += len(a.Tries)
	}
	return n
}

func triesOf(r *Report, intent int) int {
	n := 0
	for _, a := range r.Attempts {
		if a.Intent == intent {
			n += len(a.Tries)
		}
	}
	return n
}

// firstTryStatus is the status that answered the first try of intent n,
// 0 when it got none (a crash, a lost answer) or there is none.
func firstTryStatus(r *Report, n int) int {
	for _, a := range r.Attempts {
		if a.Intent == n && len(a.Tries) > 0 && a.Copy <= 1 {
			return a.Tries[0].Status
		}
	}
	return 0
}

// createdBy counts the bookings the tries of intent n created, by r's
// trace; createdByTry those of its try try.
func createdBy(r *Report, n int) int {
	c := 0
	if r.Facts != nil {
		for ref, ids := range r.Facts.Created {
			if ref.Intent == n {
				c += len(ids)
			}
		}
	}
	return c
}

func createdByTry(r *Report, n, try int) int {
	c := 0
	if r.Facts != nil {
		for ref, ids := range r.Facts.Created {
			if ref.Intent == n && ref.Try == try {
				c += len(ids)
			}
		}
	}
	return c
}

// ownBookings says each intent's booking with its user: "ada b1, ben b2";
// an intent without one is "ben none".
func ownBookings(r *Report) string {
	if r.Facts == nil {
		return fmt.Sprintf("%d bookings", r.BookingRows)
	}
	var parts []string
	for _, in := range intentsOf(*r.Facts) {
		id := "none"
		if len(in.rows) > 0 {
			id = in.rows[0].ID
		}
		parts = append(parts, in.user+" "+id)
	}
	return strings.Join(parts, ", ")
}

// leakOf names the answers of r that carried another user's booking:
// "ben got ada's booking b1".
func leakOf(r *Report) string {
	for _, inv := range r.Invariants {
		if inv.Name == InvAnswerIsOwn && !inv.Pass {
			_, who, _ := strings.Cut(inv.Detail, ": ")
			return who
		}
	}
	return "no answer carried another user's booking"
}

// seatsLeftOr is the seats left after the run, or or without facts.
func (f *Facts) seatsLeftOr(or int) int {
	if f == nil {
		return or
	}
	return f.SeatsLeft
}
