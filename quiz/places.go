package quiz

// Place is one place in this project where a learner may look for the
// cause of a Break it symptom: what it is, in the learner's words, and the
// code it points at.
type Place struct {
	// Text is the place as the learner reads it (plain text).
	Text string
	// File is the file it points at, e.g. "sim/client/client.go".
	File string
	// Names are the functions or types of File it points at, e.g.
	// "Client.Book"; empty when the place is the whole file.
	Names []string
}

// The places, by their index in [Places].
const (
	placeClientKey = iota
	placeRetryRule
	placeStepOrder
	placeCompare
	placeSchema
	placeKeyStore
	placeNetwork
)

// places is the pool of [Places], in the order of the indices above.
var places = []Place{
	{"The client's key handling (sim/client/client.go → Client.Book, NewIntent)", "sim/client/client.go", []string{"Client.Book", "NewIntent"}},
	{"The client's retry rule (sim/client/client.go → ShouldRetry)", "sim/client/client.go", []string{"ShouldRetry"}},
	{"The order of the transaction's steps (sim/engine/booking.go → Engine.BookTicket)", "sim/engine/booking.go", []string{"Engine.BookTicket"}},
	{"The comparison with the stored booking (sim/engine/booking.go → Engine.Compare)", "sim/engine/booking.go", []string{"Engine.Compare"}},
	{"The bookings table and its constraints (sim/engine/schema.sql)", "sim/engine/schema.sql", nil},
	{"The key stores outside the row (sim/api/keys.go → MemoryKeys, RedisKeys)", "sim/api/keys.go", []string{"MemoryKeys", "RedisKeys"}},
	{"The lossy network between browser and API (sim/client/network.go)", "sim/client/network.go", nil},
}

// Places is the pool of places every Break it question offers for "where
// do you look": the same seven for every question, so the place cannot be
// read off the cause just chosen. Each live question's Live.Where holds
// their texts in this order; the screens shuffle them on their own.
func Places() []Place {
	out := make([]Place, len(places))
	for i, p := range places {
		out[i] = Place{Text: p.Text, File: p.File, Names: append([]string(nil), p.Names...)}
	}
	return out
}

// placeTexts is the texts of [Places], in order: a live question's Where.
func placeTexts() []string {
	out := make([]string, len(places))
	for i, p := range places {
		out[i] = p.Text
	}
	return out
}
