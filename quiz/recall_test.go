package quiz

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// maxLengthRatio is the band every list of options must keep: its
// longest option is at most 1.5 times as long as its shortest (in
// characters), so that no option stands out by length.
const maxLengthRatio = 1.5

// optionLists is every list of options question q shows the learner to
// pick from, each with a name for the failure message: the choices of a
// single or multiple choice question, the causes and the places of a live
// one, the choices of each blank of an order question's frames ("blank"
// and its name), the choices of each prediction of a predict question.
func optionLists(q Question) map[string][]string {
	lists := map[string][]string{}
	switch q.Kind {
	case KindSingle, KindMultiple:
		lists["choices"] = q.Choices
	case KindLive:
		lists["causes"] = q.Choices
		lists["places"] = q.Live.Where
	case KindOrder:
		for _, f := range q.Frames {
			for _, b := range f.Blanks {
				lists["blank "+b.What] = b.Choices
			}
		}
	case KindPredict:
		for _, sl := range q.Predict.Slots {
			lists["prediction "+sl.What] = sl.Choices
		}
	}
	return lists
}

// rightOptions is the indices of the right options of q's list name.
func rightOptions(q Question, name string) []int {
	switch {
	case name == "places":
		return []int{q.Live.WhereCorrect}
	case strings.HasPrefix(name, "prediction "):
		for _, sl := range q.Predict.Slots {
			if name == "prediction "+sl.What {
				return []int{sl.Right}
			}
		}
	}
	return q.Correct
}

// lengthBandError says why options break the band, or "".
func lengthBandError(options []string) string {
	if len(options) < 2 {
		return ""
	}
	short, long := options[0], options[0]
	for _, o := range options {
		if utf8.RuneCountInString(o) < utf8.RuneCountInString(short) {
			short = o
		}
		if utf8.RuneCountInString(o) > utf8.RuneCountInString(long) {
			long = o
		}
	}
	ns, nl := utf8.RuneCountInString(short), utf8.RuneCountInString(long)
	if float64(nl) > maxLengthRatio*float64(ns) {
		return fmt.Sprintf("the longest option (%d characters, %q) is more than %.1f× the shortest (%d, %q)", nl, long, maxLengthRatio, ns, short)
	}
	return ""
}

// No option of any question stands out by its length: in every list the
// longest is at most maxLengthRatio times the shortest.
func TestOptionsAreEvenInLength(t *testing.T) {
	n := 0
	for _, s := range Sets() {
		for _, q := range s.Questions {
			for name, opts := range optionLists(q) {
				n++
				if why := lengthBandError(opts); why != "" {
					t.Errorf("%s, %s: %s", q.ID, name, why)
				}
			}
		}
	}
	if n < 4+6*2+5+5*4 {
		t.Errorf("only %d lists of options checked", n)
	}
	// The check rejects what it is there to reject: Checkpoint 4 as it
	// was, whose right option was three times the others.
	old := []string{
		"The key lookup on its own, with no row lock and no constraint: each copy checks for a booking before inserting",
		"The API instance that received the first copy remembers the key in memory and refuses the second",
		"For copies of one request, the event row's lock: they queue, and each later copy's lookup finds the first one's booking and replays it; the UNIQUE (user_id, idempotency_key) constraint settles what the lock cannot see (one key on two events, a lookup before the lock), where the loser gets 23505 and rolls back as a whole, seats included",
	}
	if lengthBandError(old) == "" {
		t.Error("the old Checkpoint 4 passes the length check")
	}
}

// stopWords are the words that carry no content: sharing them with the
// prompt gives nothing away.
var stopWords = strings.Fields(`a an the and or but of to in on at for with by as from into than then so is are
	was were be been being has have had do does did it its this that these those what which who whom when where why how
	would could can may might must will shall not no you your they them their he she we our i us if there here about`)

// word is a word of plain text: letters and digits, and the _ . / of
// code names kept inside it (user_id, Client.Book, sim/client/client.go).
var word = regexp.MustCompile(`[\pL\pN]+(?:[_./'’][\pL\pN]+)*`)

// contentWords returns the stems of the content words of s, lower-cased:
// stop words dropped, a possessive 's dropped, words cut to their stem
// (bookings, booking, booked and books are all "book"); code names are
// kept whole.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range word.FindAllString(strings.ToLower(s), -1) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if slices.Contains(stopWords, w) {
			continue
		}
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 && !strings.ContainsAny(w, "_./") {
			w = stem(w)
		}
		out[w] = true
	}
	return out
}

// stem cuts a plural ending ("ies" becomes "y"; "es", "s"), then "ing" or
// "ed", each only where at least three letters stay.
func stem(w string) string {
	cut := func(suffixes ...string) {
		for _, suf := range suffixes {
			if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
				w = strings.TrimSuffix(w, suf)
				return
			}
		}
	}
	if strings.HasSuffix(w, "ies") && len(w) > 4 {
		w = strings.TrimSuffix(w, "ies") + "y"
	} else if !strings.HasSuffix(w, "ss") {
		cut("es", "s")
	}
	cut("ing", "ed")
	return w
}

// shared is the content words option shares with prompt.
func shared(prompt, option string) []string {
	p := contentWords(prompt)
	var out []string
	for w := range contentWords(option) {
		if p[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// echoError says why a right option echoes the prompt more than every
// wrong one, or "".
func echoError(prompt string, options []string, right []int) string {
	most, which := -1, ""
	for i, o := range options {
		if !slices.Contains(right, i) && len(shared(prompt, o)) > most {
			most, which = len(shared(prompt, o)), o
		}
	}
	for _, r := range right {
		if got := shared(prompt, options[r]); len(got) > most {
			return fmt.Sprintf("the right option %q shares %d content words with the prompt %q, the best wrong one (%q) %d", options[r], len(got), got, which, most)
		}
	}
	return ""
}

// The right option never repeats more of the prompt's content words than
// the best wrong option does, so it cannot be spotted by echoing the
// question: in every list of every question of every set. Two kinds of
// list are left out, and why: a blank of an order question has no one
// right option (what is right depends on the step it is in, and the
// prompt names none); a predicted count (rows, seats) is a number, and the
// prompt must say how many seats are booked, which the right count of one
// booking repeats while the others are multiples of it.
func TestRightOptionDoesNotEchoThePrompt(t *testing.T) {
	for _, s := range Sets() {
		for _, q := range s.Questions {
			for name, opts := range optionLists(q) {
				if strings.HasPrefix(name, "blank ") || name == "prediction booking rows afterwards" || name == "prediction seats taken" {
					continue
				}
				if why := echoError(q.Prompt, opts, rightOptions(q, name)); why != "" {
					t.Errorf("%s, %s: %s", q.ID, name, why)
				}
			}
		}
	}
	// The check rejects Break it 3 as it was: its right cause repeated
	// the 409's "key", "different" and "booking".
	prompt := "409 “This idempotency key was already used for a different booking”." + livePrompt
	old := []string{
		"The engine took the retry of a lost answer for a new booking",
		"Two users happened to send the same key",
		"The event sold out between the two requests",
		"The client sent one key for two different bookings",
	}
	if echoError(prompt, old, []int{3}) == "" {
		t.Error("the old Break it 3 passes the echo check")
	}
	if got := contentWords("Bookings booked, the books: retries and Client.Book in sim/client/client.go"); !got["book"] || !got["retry"] || len(got) != 4 || !got["client.book"] || !got["sim/client/client.go"] || got["the"] {
		t.Errorf("contentWords = %v", got)
	}
}

// A right option is never the one that stands out as the longest: it is at
// most a tenth longer than the longest wrong option of its list (the trial
// spotted Checkpoint 3's right option as the only one that wrapped).
func TestRightOptionIsNotTheLongestByFar(t *testing.T) {
	for _, s := range Sets() {
		for _, q := range s.Questions {
			for name, opts := range optionLists(q) {
				right := rightOptions(q, name)
				longestWrong := 0
				for i, o := range opts {
					if !slices.Contains(right, i) {
						longestWrong = max(longestWrong, utf8.RuneCountInString(o))
					}
				}
				for _, i := range right {
					if n := utf8.RuneCountInString(opts[i]); longestWrong > 0 && n*10 > longestWrong*11 {
						t.Errorf("%s, %s: the right option has %d characters, the longest wrong one %d: %q", q.ID, name, n, longestWrong, opts[i])
					}
				}
			}
		}
	}
}
