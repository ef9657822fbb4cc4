package lessons

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// seedDir holds the source pages, outside the module, when the checkout has
// them.
const seedDir = "../../shared/seeds"

// verbatimAllowed are source phrases the pages must quote exactly: messages a
// learner will see on screen, and the interview card's title, which is its
// name (the question a learner looks for).
var verbatimAllowed = []string{
	"This idempotency key was already used for a different booking",
	"How do you make a booking retry safe across API instances?",
}

// phraseLen is the length, in words, of the shortest run that counts as copied.
const phraseLen = 8

// readSeeds returns the text of each source page, skipping the test when the
// seeds are not in this checkout.
func readSeeds(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(seedDir, "*.txt"))
	if len(files) == 0 {
		t.Skipf("no source pages in %s", seedDir)
	}
	seeds := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds[filepath.Base(f)] = string(b)
	}
	return seeds
}

// words lower-cases s, folds typographic quotes and dashes, and returns its
// words (runs of letters and digits).
func words(s string) []string {
	s = strings.NewReplacer("’", "'", "‘", "'", "–", "-", "—", "-").Replace(strings.ToLower(s))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

var fencedBlock = regexp.MustCompile("(?ms)^```.*?^```")

// pageProse returns the words of all pages outside fenced code, as one
// space-padded string. Fenced code is left out on purpose: the sequence
// diagram must carry the source's participants and messages unchanged.
func pageProse(t *testing.T) string {
	t.Helper()
	var all []string
	for _, p := range All() {
		all = append(all, words(fencedBlock.ReplaceAllString(p.Markdown, ""))...)
	}
	if len(all) == 0 {
		t.Fatal("no page text")
	}
	return " " + strings.Join(all, " ") + " "
}

var sentenceEnd = regexp.MustCompile(`[.!?]+(\s|$)|\n`)

func TestNoSourceSentenceCopied(t *testing.T) {
	prose := pageProse(t)
	for name, seed := range readSeeds(t) {
		for _, allowed := range verbatimAllowed {
			seed = strings.ReplaceAll(seed, allowed, "\n")
		}
		for _, sentence := range sentenceEnd.Split(seed, -1) {
			w := words(sentence)
			if len(w) < phraseLen {
				continue
			}
			if strings.Contains(prose, " "+strings.Join(w, " ")+" ") {
				t.Errorf("%s: sentence copied verbatim: %q", name, strings.TrimSpace(sentence))
			}
		}
	}
}

func TestNoLongSourcePhraseCopied(t *testing.T) {
	prose := pageProse(t)
	for name, seed := range readSeeds(t) {
		for _, allowed := range verbatimAllowed {
			seed = strings.ReplaceAll(seed, allowed, "\n")
		}
		// A run never spans two lines of the source: a line is a heading,
		// a paragraph or a diagram statement.
		for _, line := range strings.Split(seed, "\n") {
			w := words(line)
			for i := 0; i+phraseLen <= len(w); i++ {
				run := strings.Join(w[i:i+phraseLen], " ")
				if strings.Contains(prose, " "+run+" ") {
					t.Errorf("%s: %d-word run copied from the source: %q", name, phraseLen, run)
				}
			}
		}
	}
}
