package quiz

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every Break it question offers the same pool of places, the right one
// among them, so where to look cannot be read off the cause: the pool is
// Places, each points at code that is there, and no two say the same.
func TestEveryLiveQuestionOffersThePlacesPool(t *testing.T) {
	pool := Places()
	var texts []string
	for _, p := range pool {
		texts = append(texts, p.Text)
	}
	if len(pool) < 6 || len(slices.Compact(slices.Sorted(slices.Values(texts)))) != len(pool) {
		t.Fatalf("the pool %q must hold at least 6 places, each once", texts)
	}
	rights := map[int]bool{}
	for _, q := range BreakIt().Questions {
		if !slices.Equal(q.Live.Where, texts) {
			t.Errorf("%s offers the places %q, not the pool", q.ID, q.Live.Where)
		}
		if q.Live.WhereCorrect < 0 || q.Live.WhereCorrect >= len(pool) {
			t.Errorf("%s: the right place %d is not in the pool", q.ID, q.Live.WhereCorrect)
			continue
		}
		rights[q.Live.WhereCorrect] = true
	}
	if len(rights) < 4 {
		t.Errorf("the six questions have only %d different right places: the pool would give them away", len(rights))
	}
	for _, p := range pool {
		src, err := os.ReadFile(filepath.Join("..", p.File))
		if err != nil {
			t.Errorf("place %q: %v", p.Text, err)
			continue
		}
		if !strings.Contains(p.Text, p.File) {
			t.Errorf("place %q does not name its file %s", p.Text, p.File)
		}
		for _, name := range p.Names {
			if !strings.Contains(p.Text, name) || !definesName(string(src), name) {
				t.Errorf("place %q: %s is not named in its text or not defined in %s", p.Text, name, p.File)
			}
		}
	}
	if definesName("func (c *Client) Send(", "Client.Book") || !definesName("func (e *Engine) compare(", "Engine.compare") {
		t.Error("definesName is wrong")
	}
}

// definesName reports whether Go source src defines name: "T.M" a method
// M of T, "F" a function or a type.
func definesName(src, name string) bool {
	if typ, method, ok := strings.Cut(name, "."); ok {
		return regexp.MustCompile(`func \(\w+ \*?` + regexp.QuoteMeta(typ) + `\) ` + regexp.QuoteMeta(method) + `\(`).MatchString(src)
	}
	return strings.Contains(src, "func "+name+"(") || strings.Contains(src, "type "+name+" ")
}

// placeOf is the place of the pool that a verdict's "where to look"
// points at: the one whose file it names with (when the place names any)
// one of its functions or types; ok is false unless exactly one does.
func placeOf(where string) (int, bool) {
	found := -1
	for i, p := range Places() {
		if !strings.Contains(where, p.File) {
			continue
		}
		if len(p.Names) > 0 && !slices.ContainsFunc(p.Names, func(n string) bool { return strings.Contains(where, n) }) {
			continue
		}
		if found >= 0 {
			return -1, false
		}
		found = i
	}
	return found, found >= 0
}
