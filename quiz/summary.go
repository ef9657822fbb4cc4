package quiz

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
)

// Summary is the text `learn progress` prints: when the progress was last
// saved, the pages read, each set's best and last score and attempts, the
// design lab's challenges passed (of [Challenges]), the flashcards due today and the countdown of the drill, and where learn will
// resume. It is plain text (no colour, no terminal codes) ending in a
// newline; times are shown in now's location. A nil p is empty progress.
func Summary(p *progress.Progress, now time.Time) string {
	if p == nil {
		p = progress.NewProgress()
	}
	body := summaryBody(p, now)
	switch {
	case !p.UpdatedAt.IsZero():
		return fmt.Sprintf("Progress, last saved %s.\n", p.UpdatedAt.In(now.Location()).Format("2 Jan 2006 15:04")) + body
	case body == summaryBody(progress.NewProgress(), now):
		return "Progress: nothing saved yet.\n" + body
	}
	return "Progress (when it was last saved is not recorded).\n" + body
}

// IsBlank reports whether p holds nothing Summary would show: no page read,
// no answer, no challenge passed, no drill schedule, no setting, nowhere
// to resume.
func IsBlank(p *progress.Progress, now time.Time) bool {
	return summaryBody(p, now) == summaryBody(progress.NewProgress(), now)
}

// summaryBody is Summary without its first line.
func summaryBody(p *progress.Progress, now time.Time) string {
	var b strings.Builder

	pages := lessons.All()
	read := 0
	for _, pg := range pages {
		if p.IsRead(pg.Slug) {
			read++
		}
	}
	fmt.Fprintf(&b, "\nPages read: %d of %d\n", read, len(pages))
	for _, pg := range pages {
		if t, ok := p.Read[pg.Slug]; ok {
			fmt.Fprintf(&b, "  [x] %s (read %s)\n", pg.Title, t.In(now.Location()).Format("2 Jan 2006"))
		} else {
			fmt.Fprintf(&b, "  [ ] %s\n", pg.Title)
		}
	}

	b.WriteString("\nQuizzes:\n")
	drill := Interview()
	rows := []struct {
		id    string
		total int
	}{{SetInterview, len(drill.Prompts)}}
	for _, s := range Sets() {
		rows = append(rows, struct {
			id    string
			total int
		}{s.ID, len(s.Questions)})
	}
	rows = append(rows[1:], rows[0]) // the drill's spoken prompts last
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-18s %s\n", SetTitle(r.id), setLine(p.Sets[r.id], r.total))
	}

	challenges := Challenges()
	fmt.Fprintf(&b, "\nDesign lab challenges: %d of %d passed\n", ChallengesPassed(p), len(challenges))
	for _, c := range challenges {
		if t, ok := p.Challenges[c.ID]; ok {
			fmt.Fprintf(&b, "  [x] %s (passed %s)\n", c.Title, t.In(now.Location()).Format("2 Jan 2006"))
		} else {
			fmt.Fprintf(&b, "  [ ] %s\n", c.Title)
		}
	}

	due := DueToday(p, drill.Cards, now)
	fresh := 0
	for _, c := range drill.Cards {
		if _, ok := p.Drill[c.ID]; !ok {
			fresh++
		}
	}
	fmt.Fprintf(&b, "\nFlashcards: %d of %d due today", due, len(drill.Cards))
	if fresh > 0 {
		fmt.Fprintf(&b, " (%d new)", fresh)
	}
	fmt.Fprintf(&b, "\nSpoken answers: %d s countdown\n", Seconds(p))

	fmt.Fprintf(&b, "\nResume at: %s\n", resumeText(p.Resume))
	return b.String()
}

// setLine describes one set's record, e.g.
// "best 80%, last 60%, 2 attempts; 5 of 5 questions answered".
func setLine(sp *progress.SetProgress, total int) string {
	if sp == nil || (sp.Attempts == 0 && len(sp.Answers) == 0) {
		return "not tried yet"
	}
	var parts []string
	if sp.Attempts > 0 {
		parts = append(parts, fmt.Sprintf("best %s, last %s, %s", percent(sp.Best), percent(sp.LastScore), english.Plural(sp.Attempts, "attempt", "")))
	}
	if total > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d answered", min(len(sp.Answers), total), total))
	}
	return strings.Join(parts, "; ")
}

// percent is x, a score from 0 to 1, as "80%".
func percent(x float64) string {
	if math.IsNaN(x) {
		x = 0
	}
	return fmt.Sprintf("%.0f%%", 100*math.Min(math.Max(x, 0), 1))
}

// resumeText formats r as "reader › idempotency › Picture it", "play ›
// lost-answer › broken", "quiz › checkpoint, step 2", or "the home screen"
// when r names no place.
func resumeText(r progress.Place) string {
	if r.Page == "" {
		return "the home screen"
	}
	parts := []string{string(r.Page)}
	for _, s := range []string{r.Name, r.Variant, r.Section} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	out := strings.Join(parts, " › ")
	if r.Step > 0 {
		out += fmt.Sprintf(", step %d", r.Step)
	}
	return out
}
