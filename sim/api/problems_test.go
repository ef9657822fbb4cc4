package api

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/problems.md from the catalogue")

// codeConstants returns every constant named Code… in the Go files of dir
// (tests left out) with its value: the codes the API can answer with.
func codeConstants(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					codes[id.Name] = v
				}
			}
			return true
		})
	}
	return codes
}

// TestEveryErrorHasAProblemType: every code the API and the engine define
// has its problem type in the catalogue (a title, what is stored, advice),
// so no answer goes out with a type that documents nothing; and the
// catalogue names no code that does not exist.
func TestEveryErrorHasAProblemType(t *testing.T) {
	codes := codeConstants(t, ".")
	for k, v := range codeConstants(t, "../engine") {
		codes[k] = v
	}
	if len(codes) < 20 {
		t.Fatalf("found only %d Code constants: %v", len(codes), codes)
	}
	known := map[string]bool{}
	for _, p := range Problems() {
		known[p.Code] = true
		if p.Title == "" || p.Advice == "" || (p.Stored != "nothing" && p.Stored != "unknown") || http.StatusText(p.Status) == "" {
			t.Errorf("problem type %+v is incomplete", p)
		}
	}
	defined := map[string]bool{}
	for name, code := range codes {
		defined[code] = true
		if !known[code] {
			t.Errorf("%s = %q has no problem type in problemTypes", name, code)
		}
	}
	for code := range known {
		if !defined[code] {
			t.Errorf("problem type %q is no Code constant", code)
		}
	}
}

// problemsPage is docs/problems.md as the catalogue says it.
func problemsPage() string {
	var b strings.Builder
	b.WriteString("# The booking API's problem types\n\n")
	b.WriteString("Every answer of `learn serve` that is not 200 is `application/problem+json` (RFC 9457):\n")
	b.WriteString("`type` is this page with the code as its fragment, `title` the heading below, `status`\n")
	b.WriteString("the HTTP status, `detail` what happened this time, and `code` the code. An answer whose\n")
	b.WriteString("advice is to retry carries `Retry-After`. A refusal stores nothing: the same\n")
	b.WriteString("idempotency key may be sent again later and succeed.\n\n")
	b.WriteString("This page is made from the catalogue in `sim/api/problems.go`:\n")
	b.WriteString("`go test ./sim/api -run TestProblemsPageListsEveryCode -update` writes it again.\n")
	for _, p := range Problems() {
		fmt.Fprintf(&b, "\n## %s\n\n", p.Code)
		fmt.Fprintf(&b, "**%d %s.** %s.\n\n", p.Status, http.StatusText(p.Status), p.Title)
		switch p.Stored {
		case "nothing":
			b.WriteString("Stored: nothing.")
		default:
			b.WriteString("Stored: unknown, the booking may have been made.")
		}
		if p.Retry {
			b.WriteString(" Retry-After: yes.")
		}
		fmt.Fprintf(&b, " %s.\n", p.Advice)
	}
	return b.String()
}

// TestProblemsPageListsEveryCode: docs/problems.md, where every problem's
// type points, has a heading (the fragment) for every code, as the
// catalogue says it.
func TestProblemsPageListsEveryCode(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "problems.md")
	want := problemsPage()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/problems.md is not the catalogue's: run go test ./sim/api -run TestProblemsPageListsEveryCode -update")
	}
	for _, p := range Problems() {
		if !strings.Contains(string(got), "\n## "+p.Code+"\n") {
			t.Errorf("docs/problems.md has no heading %s", p.Code)
		}
	}
}

// TestProblemAnswers: an answer that is not 200 is problem details with the
// code's type and title, and Retry-After exactly when the advice is to
// retry (a 500 too, not only a 503).
func TestProblemAnswers(t *testing.T) {
	for _, tt := range []struct {
		e     *Error
		title string
		after string
	}{
		{errInternal(), "Internal error", RetryAfter},
		{errUnauthorized(), "Unauthorized", ""},
		{&Error{Status: 503, Code: CodeDatabaseDown, retryAfter: retryAfterRestart, Message: "down"}, "Database down", retryAfterRestart},
		{&Error{Status: 409, Code: "key_reused", Message: "used"}, "Idempotency key reused", ""},
	} {
		rec := httptest.NewRecorder()
		writeProblem(rec, tt.e)
		e, err := ParseProblem(rec.Body.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", tt.e.Code, err)
		}
		if rec.Code != tt.e.Status || rec.Header().Get("Content-Type") != ContentTypeProblem || rec.Header().Get("Retry-After") != tt.after ||
			*e != (Error{Status: tt.e.Status, Code: tt.e.Code, Message: tt.e.Message}) || !strings.Contains(rec.Body.String(), `"title": "`+tt.title+`"`) {
			t.Errorf("%s: %d %q Retry-After %q\n%s", tt.e.Code, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), rec.Body)
		}
	}
}
