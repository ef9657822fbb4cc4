package lessons

import "strings"

// Kind says what a page is for: a lesson to read, or an interview card to drill.
type Kind string

// The kinds of page.
const (
	// KindLesson is a lesson page: sections, sequence, break-it table, checkpoint.
	KindLesson Kind = "lesson"
	// KindInterview is an interview card: a spoken answer, a deeper answer and
	// counter-questions.
	KindInterview Kind = "interview"
)

// Page is one parsed page. Pages returned by [All] and [Get] are shared by
// every caller: treat them as read-only.
type Page struct {
	// Slug names the page on the command line and in saved progress, e.g.
	// "idempotency". It equals the file name without ".md".
	Slug string
	// Title is the text of the page's "# " heading.
	Title string
	// Kind is KindLesson or KindInterview.
	Kind Kind
	// Markdown is the whole page without its front matter, for the renderer.
	// Line 0 is the "# " title line.
	Markdown string
	// Sections are the "## " sections in page order.
	Sections []Section
	// Checkpoint holds the checkpoint questions in order (lessons only), as
	// Markdown.
	Checkpoint []string
	// BreakIt holds the rows of the Break it table (lessons only).
	BreakIt []BreakRow
	// FollowUps holds the lesson's Follow-ups or the interview card's
	// Counter-questions, in order.
	FollowUps []FollowUp
	// Sequence is the page's sequence diagram, or nil if it has none.
	Sequence *Sequence
	// SpokenAnswer is the 20–30 second answer (lesson: Say it in an interview;
	// interview: Say it in 30 seconds) as plain text, Markdown markup removed.
	SpokenAnswer string
}

// Section is one "## " section of a page.
type Section struct {
	// Title is the heading text, e.g. "How it works".
	Title string
	// Anchor is the GitHub-style anchor of the heading, e.g. "how-it-works";
	// a repeated title gets "-1", "-2", … appended.
	Anchor string
	// Markdown is the section's body: the lines after its heading up to the
	// next "## " heading, without the heading and without surrounding blank
	// lines.
	Markdown string
	// Line is the 0-based line of the section's heading in Page.Markdown.
	Line int
}

// BreakRow is one row of a Break it table: a symptom the learner may see,
// its cause, and the place in the project to look.
type BreakRow struct {
	Symptom, Cause, WhereToLook string
}

// FollowUp is one follow-up or counter-question with its answer; both are
// Markdown.
type FollowUp struct {
	Question, Answer string
}

// Section returns the section whose title equals title, ignoring case and
// surrounding spaces, and whether there is one.
func (p *Page) Section(title string) (Section, bool) {
	title = strings.TrimSpace(title)
	for _, s := range p.Sections {
		if strings.EqualFold(s.Title, title) {
			return s, true
		}
	}
	return Section{}, false
}
