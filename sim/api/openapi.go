package api

import (
	_ "embed"
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

func handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(OpenAPI)
}
