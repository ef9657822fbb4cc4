package lessons

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadFromKeepsGoodPagesAndReportsBadOnes(t *testing.T) {
	card := strings.Replace(sampleCard, "slug: sample", "slug: a-card", 1)
	lesson := strings.Replace(sampleLesson, "slug: sample", "slug: z-lesson", 1)
	fsys := fstest.MapFS{
		"pages/a-card.md":   {Data: []byte(card)},
		"pages/z-lesson.md": {Data: []byte(lesson)},
		"pages/broken.md":   {Data: []byte("# no front matter\n")},
		"pages/notes.txt":   {Data: []byte("not a page")},
	}
	pages, err := loadFrom(fsys)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != "pages/broken.md" {
		t.Fatalf("error = %v, want a ParseError for pages/broken.md", err)
	}
	if len(pages) != 2 || pages[0].Slug != "z-lesson" || pages[1].Slug != "a-card" {
		t.Fatalf("pages = %v, want z-lesson (a lesson) before a-card", pages)
	}
}

func TestLoadFromEmpty(t *testing.T) {
	if _, err := loadFrom(fstest.MapFS{}); err == nil {
		t.Fatal("no error for an empty page folder")
	}
}

func TestAllReturnsACopy(t *testing.T) {
	a := All()
	a[0] = nil
	if All()[0] == nil {
		t.Fatal("All shares its slice with callers")
	}
}
