package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document (openapi.json, served at GET
// /openapi.json): every path, body and header, the problem codes with
// their statuses, and the idempotency contract in words (the key's format
// and scope, that it never expires and why, what is stored, how copies in
// flight are answered and how long they wait). TestOpenAPIDocumentIsTheAPIs
// holds it to the catalogue; every test that talks to the API validates
// each answer it gets against it (contracttest).
//
//go:embed openapi.json
var OpenAPI []byte

// OpenAPIFor is the document an instance of design serves: OpenAPI as it
// is for the lesson's ("" design), else with its contract marked as the
// lesson's, which the design served breaks on purpose.
func OpenAPIFor(design string) []byte {
	if design == "" {
		return OpenAPI
	}
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		return OpenAPI
	}
	if info, ok := doc["info"].(map[string]any); ok {
		desc, _ := info["description"].(string)
		info["description"] = "**This learn serve runs the design " + design + ", NOT the lesson's: it breaks the contract below on purpose, as a practice target.** The contract below is the lesson's design's.\n\n" + desc
		info["x-learn-design"] = design
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return OpenAPI
	}
	return append(b, '\n')
}

func (a *API) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a.contract())
}

// contract is the document this instance serves (OpenAPIFor its Design).
func (a *API) contract() []byte {
	a.contractOnce.Do(func() { a.contractDoc = OpenAPIFor(a.Design) })
	return a.contractDoc
}
