package lessons

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// pagesFS holds the page files, one pages/<slug>.md per page.
//
//go:embed pages/*.md
var pagesFS embed.FS

var (
	loadOnce sync.Once
	loaded   []*Page
	loadErr  error
)

// Load parses the embedded pages (once; later calls return the same result)
// and returns them with lessons first, then interview cards, each group in
// file-name order. Slugs are unique because each must equal its file name.
// The error joins every page that failed to parse (as [*ParseError]); the pages that did parse are still
// returned. It never panics on a malformed page.
func Load() ([]*Page, error) {
	loadOnce.Do(func() { loaded, loadErr = loadFrom(pagesFS) })
	return loaded, loadErr
}

// All returns the pages that parsed, lessons first, then interview cards.
// Call [Load] to see why a page is missing. The slice is the caller's own;
// the pages are shared and read-only.
func All() []*Page {
	pages, _ := Load()
	return append([]*Page(nil), pages...)
}

// Get returns the page with the given slug. For an unknown slug the error
// wraps [ErrUnknownPage] and lists the known slugs; if some page failed to
// parse, that error is joined to it.
func Get(slug string) (*Page, error) {
	pages, err := Load()
	known := make([]string, 0, len(pages))
	for _, p := range pages {
		if p.Slug == slug {
			return p, nil
		}
		known = append(known, p.Slug)
	}
	unknown := fmt.Errorf("lessons: %w %q; known pages: %s", ErrUnknownPage, slug, strings.Join(known, ", "))
	if err != nil {
		return nil, errors.Join(unknown, err)
	}
	return nil, unknown
}

// kindRank orders kinds: lessons before interview cards.
var kindRank = map[Kind]int{KindLesson: 0, KindInterview: 1}

// loadFrom parses every pages/*.md file of fsys; see [Load].
func loadFrom(fsys fs.FS) ([]*Page, error) {
	files, err := fs.Glob(fsys, "pages/*.md")
	if err != nil {
		return nil, err
	}
	var pages []*Page
	var errs []error
	for _, f := range files { // fs.Glob returns names in lexical order
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p, err := parsePage(f, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pages = append(pages, p)
	}
	if len(files) == 0 {
		errs = append(errs, errors.New("lessons: no pages/*.md files embedded"))
	}
	slices.SortStableFunc(pages, func(a, b *Page) int { return kindRank[a.Kind] - kindRank[b.Kind] })
	return pages, errors.Join(errs...)
}
