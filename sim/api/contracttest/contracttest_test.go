package contracttest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// TestOpenAPIDocumentIsTheAPIs: openapi.json is a valid OpenAPI 3.1
// document, its Problem codes are the catalogue's, every status of the
// catalogue is an answer POST /bookings lists, and its contract says the
// things the IETF draft asks a resource to publish.
func TestOpenAPIDocumentIsTheAPIs(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	doc := v.Doc()
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var codes []string
	for _, c := range doc.Components.Schemas["Problem"].Value.Properties["code"].Value.Enum {
		codes = append(codes, c.(string))
	}
	var want []string
	for _, p := range api.Problems() {
		want = append(want, p.Code)
		if doc.Paths.Find("/bookings").Post.Responses.Status(p.Status) == nil {
			t.Errorf("POST /bookings lists no %d (%s)", p.Status, p.Code)
		}
	}
	slices.Sort(codes)
	slices.Sort(want)
	if !slices.Equal(codes, want) {
		t.Errorf("Problem codes %v\nthe catalogue's %v", codes, want)
	}
	for _, words := range []string{"Idempotency-Key", "UUID", "never", "A refusal (4xx) stores nothing", "Idempotent-Replayed: true", "at most 5 s for the lock", "row lock", "RFC 9457"} {
		if !strings.Contains(doc.Info.Description, words) {
			t.Errorf("the contract does not say %q", words)
		}
	}
}

// TestValidatorCatchesWhatTheDocumentDoesNotSay: the check is not one that
// passes everything: an answer with a field the document does not have, a
// status it does not list, or a problem without its code, is a mismatch;
// the API's own answers are not.
func TestValidatorCatchesWhatTheDocumentDoesNotSay(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	problem := http.Header{"Content-Type": {api.ContentTypeProblem}}
	booking := `{"booking": {"id": "b1", "event_id": 1, "user_id": "ada", "quantity": 2, "idempotency_key": "` + uuid.NewString() + `", "created_at": "2026-12-02T02:24:07.713851Z"}}`
	for _, tt := range []struct {
		name   string
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"a booking", 200, json, booking, true},
		{"the old replay field", 200, json, strings.Replace(booking, `}}`, `}, "replayed": true}`, 1), false},
		{"a problem", 409, problem, `{"type": "` + api.ProblemBase + `key_reused", "title": "Idempotency key reused", "status": 409, "detail": "used", "code": "key_reused"}`, true},
		{"the old error shape", 409, json, `{"error": {"status": 409, "code": "key_reused", "message": "used"}}`, false},
		{"a code outside the catalogue", 409, problem, `{"type": "x", "title": "x", "status": 409, "detail": "x", "code": "seats_gone"}`, false},
		{"a status not listed", 418, problem, `{"type": "x", "title": "x", "status": 418, "detail": "x", "code": "not_found"}`, false},
	} {
		checked, err := v.Check("POST", "http://127.0.0.1:1/bookings", tt.status, tt.header, []byte(tt.body))
		if !checked || (err == nil) != tt.ok {
			t.Errorf("%s: checked %v, err %v; want ok=%v", tt.name, checked, err, tt.ok)
		}
	}
	if checked, _ := v.Check("GET", "/nowhere", 404, problem, nil); checked {
		t.Error("a path the document does not have was checked")
	}

	// The API's own answers, through the checking transport.
	v2, _ := New()
	// No database: each request is answered before the engine is asked.
	srv := httptest.NewServer((&api.API{Engine: &engine.Engine{Lane: "api-1"}, Users: api.DemoUsers(), Log: slog.New(slog.DiscardHandler)}).Handler())
	defer srv.Close()
	c := &http.Client{Transport: v2.Transport(http.DefaultTransport)}
	for _, r := range []struct{ method, path string }{{"GET", "/openapi.json"}, {"POST", "/bookings"}, {"DELETE", "/events"}, {"GET", "/events/x"}} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(`{"event_id": 1, "quantity": 2}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if r.method == "DELETE" && resp.Header.Get("Allow") != "GET, POST" {
			t.Errorf("405 Allow %q, want GET, POST", resp.Header.Get("Allow"))
		}
	}
	if report, ok := v2.Report(); !ok || !strings.Contains(report, ": 3 answers") { // DELETE is no operation of the document
		t.Errorf("%s", report)
	}
}

// The document a broken design serves says so on top (its summary and
// description begin with the warning), keeps its order, and is still a
// valid document.
func TestABrokenDesignsDocumentSaysSoOnTop(t *testing.T) {
	doc := api.OpenAPIFor("lookup=after-seat-check")
	head := string(doc[:min(len(doc), 600)])
	if !strings.HasPrefix(string(doc), "{\n\t\"openapi\": \"3.1.0\",") || !strings.Contains(head, `"summary": "This learn serve runs the design lookup=after-seat-check, NOT the lesson's`) {
		t.Errorf("the top of the document:\n%s", head)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil || loaded.Validate(t.Context()) != nil || !strings.HasPrefix(loaded.Info.Description, "This learn serve runs the design") {
		t.Errorf("the broken design's document: %v", err)
	}
}
