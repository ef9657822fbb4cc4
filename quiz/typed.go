package quiz

import (
	"strings"
	"unicode"
)

// Cue says in which words a typed answer makes one key point: it makes it
// when, for every group of the cue, the text holds one of the group's
// entries. An entry is a word or a phrase matched case-insensitively at
// the start of a word of the text ("retr" matches "retries", "for
// update" matches "FOR UPDATE"), so an entry may be a stem; an entry
// ending in a space matches whole words only ("id " matches "an id" but
// not "idempotent").
type Cue [][]string

// UnsaidCredit is what a key point the learner ticked is worth when their
// typed answer does not mention it (by its [Cue]): half a point. A point
// the text mentions and the learner ticked is worth 1; one not ticked, 0.
const UnsaidCredit = 0.5

// Mentions reports, for each of cues, whether text makes its point.
// Empty text mentions nothing.
func Mentions(text string, cues []Cue) []bool {
	t := " " + normalize(text) + " "
	out := make([]bool, len(cues))
	for i, c := range cues {
		out[i] = len(c) > 0
		for _, group := range c {
			found := false
			for _, entry := range group {
				e := " " + normalize(entry)
				if strings.HasSuffix(entry, " ") {
					e += " "
				}
				if strings.Contains(t, e) {
					found = true
					break
				}
			}
			if !found {
				out[i] = false
				break
			}
		}
	}
	return out
}

// normalize lower-cases s and turns every run of characters other than
// letters and digits into one space.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
