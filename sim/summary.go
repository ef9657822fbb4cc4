package sim

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize/english"
)

// Summary is a one-line account of the report in the JSON's terms, equal
// answers counted together, refusals with their message: "answers 200 b1
// (replay) · 1 lost · 1 booking row · 2 seats taken".
func (r *Report) Summary() string {
	return fmt.Sprintf("answers %s · %d lost · %s · %d seats taken",
		GroupAnswers(r.Answers, true), r.Lost, english.Plural(r.BookingRows, "booking row", ""), r.SeatsTaken)
}

// GroupAnswers counts equal answers in arrival order: "200 b1, 9 × 200 b1
// (replay)"; the refusals' messages only when withMessages; "none" for no
// answer, and "N, M distinct" when more than six differ.
func GroupAnswers(answers []AnswerReport, withMessages bool) string {
	if len(answers) == 0 {
		return "none"
	}
	counts := map[string]int{}
	var order []string
	for _, a := range answers {
		if !withMessages {
			a.Message = ""
		}
		s := a.String()
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	if len(order) > 6 { // many distinct bookings: count them instead
		return fmt.Sprintf("%d, %d distinct", len(answers), len(order))
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = s
		if counts[s] > 1 {
			parts[i] = fmt.Sprintf("%d × %s", counts[s], s)
		}
	}
	return strings.Join(parts, ", ")
}
