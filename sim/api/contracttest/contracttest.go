// Package contracttest holds the API's answers to its published contract in
// tests: a [Validator] reads api.OpenAPI once and checks an answer (status,
// headers, body) against the operation its request names, and
// [InstallDefault] puts one in front of http.DefaultTransport for a whole
// test binary, so that every answer a package's tests get through Go's
// default client or transport is checked; [Validator.Report] says, at the
// end, how many were checked and which did not match. Tests that write raw
// HTTP check what they read with [Validator.Check] themselves.
package contracttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/learn-idempotency/learn/sim/api"
)

// Validator checks answers against api.OpenAPI. It is safe for use by
// several goroutines.
type Validator struct {
	doc    *openapi3.T
	router routers.Router

	mu       sync.Mutex
	checked  int
	failures []string
}

// New loads and validates api.OpenAPI.
func New() (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &Validator{doc: doc, router: router}, nil
}

// Doc is the loaded document.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// Check checks one answer to a request of method on target (a URL, or a
// path) against the document: its status must be one the operation
// lists, its headers and body must match what it says. A request for a
// path or method the document does not have is not checked (false): the
// document says nothing of it. A mismatch is kept for Report and returned.
func (v *Validator) Check(method, target string, status int, header http.Header, body []byte) (checked bool, err error) {
	u, err := url.Parse(target)
	if err != nil {
		return false, err
	}
	req := &http.Request{Method: method, URL: &url.URL{Path: u.Path, RawQuery: u.RawQuery}, Header: http.Header{}, Host: u.Host}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return false, nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	v.mu.Lock()
	v.checked++
	v.mu.Unlock()
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		err = fmt.Errorf("%s %s → %d %s: %v\n%.400s", method, u.Path, status, header.Get("Content-Type"), err, body)
		v.mu.Lock()
		v.failures = append(v.failures, err.Error())
		v.mu.Unlock()
		return true, err
	}
	return true, nil
}

// Transport returns base with every answer checked: the body is read whole
// and handed on unchanged.
func (v *Validator) Transport(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil || !strings.HasPrefix(req.URL.Scheme, "http") {
			return resp, err
		}
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr == nil && isAPI(resp) {
			_, _ = v.Check(req.Method, req.URL.String(), resp.StatusCode, resp.Header, body)
		}
		return resp, rerr
	})
}

// isAPI reports whether resp comes from learn's API, and not from another
// server a test talks to: its instances and its front door name the
// instance on every answer they write through net/http, and every answer
// written below it (net/http's own refusals rewritten, a full listener's
// 503, the front door's own) is problem details.
func isAPI(resp *http.Response) bool {
	return resp.Header.Get(api.HeaderInstance) != "" || resp.Header.Get("Content-Type") == api.ContentTypeProblem
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Report says how many answers were checked and lists the mismatches; ok
// is false when there is one.
func (v *Validator) Report() (report string, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.failures) == 0 {
		return fmt.Sprintf("contracttest: %d answers of the API checked against openapi.json, all as it says", v.checked), true
	}
	return fmt.Sprintf("contracttest: %d of %d answers of the API do not match openapi.json:\n%s", len(v.failures), v.checked, strings.Join(v.failures, "\n")), false
}

// InstallDefault puts a Validator in front of http.DefaultTransport (and
// so http.DefaultClient) for the rest of the test binary and returns it.
func InstallDefault() (*Validator, error) {
	v, err := New()
	if err != nil {
		return nil, err
	}
	http.DefaultTransport = v.Transport(http.DefaultTransport)
	return v, nil
}
