package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
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
	// The document as it is, key for key in its order, with the warning
	// put first in info's summary and description: what a person reads on
	// top of it.
	warn := "This learn serve runs the design " + design + ", NOT the lesson's: it breaks the contract below on purpose, as a practice target. "
	out := OpenAPI
	for _, field := range []string{`"summary": "`, `"description": "`} {
		info := bytes.Index(out, []byte(`"info": {`))
		if info < 0 {
			return OpenAPI
		}
		at := bytes.Index(out[info:], []byte(field))
		if at < 0 {
			return OpenAPI
		}
		at += info + len(field)
		esc, _ := json.Marshal(warn)
		out = slices.Concat(out[:at], esc[1:len(esc)-1], out[at:])
	}
	return out
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
