package quiz

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// knownQuestions maps each set this learn has (the quizzes and the
// interview drill) to the IDs of its questions, in order: what a saved
// answer or a "next" must name to mean anything.
var knownQuestions = sync.OnceValue(func() map[string][]string {
	known := map[string][]string{}
	for _, s := range Sets() {
		for _, q := range s.Questions {
			known[s.ID] = append(known[s.ID], q.ID)
		}
	}
	for _, p := range Interview().Prompts {
		known[SetInterview] = append(known[SetInterview], p.ID)
	}
	return known
})

// dropUnknown removes from p what names no question of this learn: an
// answer to a question its set does not have, a "next" past the end of the
// set (its length: every question answered, the attempt not yet finished). It returns them as values set aside, so that they are said and
// the file as it was is kept, as for a value of the wrong type. Sets this
// learn does not know are left alone. p is normalized.
func (p *Progress) dropUnknown() []setAside {
	var lost []setAside
	known := knownQuestions()
	for id, sp := range p.Sets {
		ids, ok := known[id]
		if !ok {
			continue
		}
		for q, a := range sp.Answers {
			if !slices.Contains(ids, q) {
				raw, _ := json.Marshal(a)
				if a.At.IsZero() {
					raw = json.RawMessage(fmt.Sprintf(`{"score":%v}`, a.Score))
				}
				lost = append(lost, setAside{path: fmt.Sprintf("sets.%s.answers.%s", id, q), raw: raw})
				delete(sp.Answers, q)
			}
		}
		// Next == len(ids) is a set whose last question is answered and
		// whose attempt is not yet finished: the quiz saves it so.
		if sp.Next < 0 || sp.Next > len(ids) {
			if sp.Next != 0 {
				lost = append(lost, setAside{path: fmt.Sprintf("sets.%s.next", id), raw: json.RawMessage(fmt.Sprint(sp.Next))})
			}
			sp.Next = 0
		}
	}
	return lost
}
