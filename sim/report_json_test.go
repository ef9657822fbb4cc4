package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

// The JSON report names every field the README lists, whatever the run:
// a verdict that held has "failed": [] (a script reads d["verdict"]["failed"]),
// and a try without a booking has "booking_id": null and "replayed": false,
// as an answer does (they were left out).
func TestReportJSONHasEveryDocumentedField(t *testing.T) {
	v := Verdict{Held: true, Says: "one booking", Failed: []Invariant{}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"failed":[]`) {
		t.Errorf("a verdict that held: %s; want \"failed\":[]", b)
	}
	for _, tc := range []struct {
		try  TryResult
		want []string
	}{
		{TryResult{Try: 1, Instance: "api-1", Status: 409}, []string{`"booking_id":null`, `"replayed":false`, `"status":409`}},
		{TryResult{Try: 2, Instance: "api-2", Status: 200, BookingID: "b7", Replayed: true}, []string{`"booking_id":"b7"`, `"replayed":true`}},
	} {
		b, err := json.Marshal(tc.try)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%+v as JSON: %s; want %s in it", tc.try, b, w)
			}
		}
		var back TryResult
		if err := json.Unmarshal(b, &back); err != nil || back != tc.try {
			t.Errorf("%s reads back as %+v (%v); want %+v", b, back, err, tc.try)
		}
	}
}
