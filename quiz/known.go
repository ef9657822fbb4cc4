package quiz

import "sync"

// Known maps each set this learn has (the quizzes and the interview drill)
// to the IDs of its questions, in order: what a saved answer or a "next"
// must name to mean anything, for progress.Store.Known. The map is
// shared: it must not be changed.
func Known() map[string][]string { return known() }

var known = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for _, s := range Sets() {
		for _, q := range s.Questions {
			out[s.ID] = append(out[s.ID], q.ID)
		}
	}
	for _, p := range Interview().Prompts {
		out[SetInterview] = append(out[SetInterview], p.ID)
	}
	return out
})
