package progress

import (
	"encoding/json"
	"fmt"
	"slices"
)

// dropUnknown removes from p what names no question of known (each set's
// question IDs, in order; see [Store.Known]): an answer to a question its
// set does not have, a "next" past the end of the set (its length: every
// question answered, the attempt not yet finished). It returns them as
// values set aside, so that they are said and the file as it was is kept,
// as for a value of the wrong type. Sets known does not name are left
// alone. p is normalized.
func (p *Progress) dropUnknown(known map[string][]string) []setAside {
	var lost []setAside
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
