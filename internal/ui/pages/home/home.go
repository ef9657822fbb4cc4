// Package home is the home menu: where the learner left off (when there is
// somewhere to go back to), then the learning path in the order a learner
// needs it (learningPath), each entry with the learner's progress beside
// it, and where the database stands. Nothing on
// it is cut short: long titles, the description and the database line wrap,
// and at small sizes the menu scrolls.
package home

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/dbstatus"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// item is one entry of the menu; status, when set, says the learner's
// progress on it.
type item struct {
	title, desc string
	open        common.Open
	status      func(p *progress.Progress) string
	gapAfter    bool // a blank line follows: resume | learn it | recall it | break it and build it | say it
}

// Model is the home menu.
type Model struct {
	c     *common.Common
	items []item // the menu without its resume entry
	// selected is the title of the entry under the cursor: the resume
	// entry comes and goes with the saved progress, the cursor stays on
	// its entry.
	selected string
	spin     spinner.Model
}

// New builds the menu from the pages, the scenarios and the quiz sets, in
// the order of the learning path (see learningPath).
func New(c *common.Common) *Model {
	m := &Model{c: c, items: learningPath(quiz.Sets(), c.ExercisesDir), spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
	m.selected = m.entries()[0].title // the resume entry, when there is one
	return m
}

// learningPath is the menu in the order a learner needs it, in four groups
// with a blank line between them: learn it (the lesson, the lost answer
// played), recall it (the Checkpoint, Redraw it), break it and build it
// (the scenarios, the race, Break it, then every set of sets that this
// function does not place by its ID, then the design lab and its
// challenges, then the exercises in exercisesDir: "" says why they are
// not offered), say it (the interview card, the drill).
func learningPath(sets []quiz.Set, exercisesDir string) []item {
	var lesson, card []item
	for _, p := range lessons.All() {
		kind, slug := "Lesson", p.Slug
		if p.Kind == lessons.KindInterview {
			kind = "Interview card"
		}
		it := item{title: kind + ": " + p.Title, desc: blurb(p), open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: p.Slug}},
			status: func(pr *progress.Progress) string {
				if pr.IsRead(slug) {
					return "✓ read"
				}
				return "not read yet"
			}}
		if p.Kind == lessons.KindInterview {
			card = append(card, it)
		} else {
			lesson = append(lesson, it)
		}
	}
	placed := map[string][]item{} // the sets placed by their ID
	var others []item             // the sets placed after Break it
	for _, s := range sets {
		it := item{title: fmt.Sprintf("%s (%s)", s.Title, setSize(s)), desc: s.Intro, open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: s.ID}},
			status: func(pr *progress.Progress) string { return setStatus(pr, s) }}
		switch s.ID {
		case quiz.SetCheckpoint, quiz.SetRedraw, quiz.SetBreakIt:
			placed[s.ID] = append(placed[s.ID], it)
		default:
			others = append(others, it)
		}
	}
	lost, _ := sim.Lookup("lost-answer")
	play := item{title: "Play: the lost answer", desc: lost.Summary, open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: lost.Name}}}
	scenarios := item{title: fmt.Sprintf("Scenarios: all %d, %d with a broken design", len(sim.Scenarios()), brokenCount()),
		desc: "every failure the lesson names, run live: pick one, v for its broken variant", open: common.Open{Place: progress.Place{Page: progress.PagePicker}}}
	race := item{title: "Race: N copies of one request at once", desc: "fire 2 to 100 copies at the same instant and watch one booking come out (v: without the lock and the constraint)",
		open: common.Open{Place: progress.Place{Page: progress.PageRace}}}
	lab := item{title: "Design lab: build the endpoint from switches", open: common.Open{Place: progress.Place{Page: progress.PageLab}},
		desc: "turn the lock, the lookup, the constraint, the store, the isolation level, the client's key and retries on and off, and run every scenario against your design",
		status: func(pr *progress.Progress) string {
			return fmt.Sprintf("%d of %d challenges", quiz.ChallengesPassed(pr), len(quiz.Challenges()))
		}}
	writeIt := item{title: "Write it yourself: the booking transaction in Go and pgx", open: common.Open{Place: progress.Place{Page: progress.PageExercises}},
		desc: fmt.Sprintf("%d exercises in %s, each checked live by the lesson's scenarios every time you save (learn exercises)", len(exercises.Ladder), exercisesDir),
		status: func(pr *progress.Progress) string {
			n := 0
			for _, e := range exercises.Ladder {
				if !pr.Exercises[e.ID].PassedAt.IsZero() {
					n++
				}
			}
			return fmt.Sprintf("%d of %d passed", n, len(exercises.Ladder))
		}}
	if exercisesDir == "" {
		writeIt.open, writeIt.status = common.Open{}, nil
		writeIt.desc = "not offered here: " + common.NoExercises
	}
	d := quiz.Interview()
	drill := item{title: "Interview drill", open: common.Open{Place: progress.Place{Page: progress.PageDrill}},
		desc: fmt.Sprintf("%d answers against a countdown, then %d flashcards by spaced repetition", len(d.Prompts), len(d.Cards)),
		status: func(pr *progress.Progress) string {
			return fmt.Sprintf("%d due today", quiz.DueToday(pr, d.Cards, common.Now()))
		}}

	groups := [][]item{
		append(lesson, play),
		append(placed[quiz.SetCheckpoint], placed[quiz.SetRedraw]...),
		slices.Concat([]item{scenarios, race}, placed[quiz.SetBreakIt], others, []item{lab, writeIt}),
		append(card, drill),
	}
	var items []item
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		g[len(g)-1].gapAfter = true
		items = append(items, g...)
	}
	items[len(items)-1].gapAfter = false
	return items
}

// entries is the menu as it stands: the resume entry first when the saved
// progress names a place to go back to.
func (m *Model) entries() []item {
	if r, ok := resumeItem(m.c.Progress.Get().Resume); ok {
		return append([]item{r}, m.items...)
	}
	return m.items
}

// cursor is the index of the selected entry in entries (the first when it
// is gone).
func (m *Model) cursor(entries []item) int {
	for i, it := range entries {
		if it.title == m.selected {
			return i
		}
	}
	return 0
}

// resumeItem is the entry that reopens r, where the learner left off last:
// the page, the section or question, the design. ok is false when r names
// nothing that exists (nothing saved, or a page since renamed).
func resumeItem(r progress.Place) (item, bool) {
	var o common.Open
	var where string
	switch r.Page {
	case progress.PageReader:
		p, err := lessons.Get(r.Name)
		if err != nil {
			return item{}, false
		}
		o, where = common.Open{Place: progress.Place{Page: progress.PageReader, Name: r.Name, Section: r.Section}}, p.Title
		if r.Section != "" {
			where += " › " + r.Section
		}
	case progress.PagePlay:
		s, err := sim.Lookup(r.Name)
		if err != nil {
			return item{}, false
		}
		v := sim.Variant(r.Variant)
		if v != sim.Broken || !s.HasBroken() {
			v = sim.Correct
		}
		o, where = common.Open{Place: progress.Place{Page: progress.PagePlay, Name: r.Name, Variant: string(v)}}, fmt.Sprintf("Play · %s (%s design)", s.Title, v)
	case progress.PageQuiz:
		for _, s := range quiz.Sets() {
			if s.ID == r.Name && r.Step < len(s.Questions) {
				o, where = common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: r.Name, Step: r.Step}}, fmt.Sprintf("%s, question %d of %d", s.Title, r.Step+1, len(s.Questions))
			}
		}
		if where == "" {
			return item{}, false
		}
	case progress.PageExercises:
		o, where = common.Open{Place: progress.Place{Page: progress.PageExercises}}, "Write it yourself"
	case progress.PageDrill:
		o, where = common.Open{Place: progress.Place{Page: progress.PageDrill, Step: r.Step}}, "Interview drill"
		switch n := len(quiz.Interview().Prompts); {
		case r.Step >= n:
			where += ", the flashcards"
		case r.Step > 0:
			where += fmt.Sprintf(", question %d of %d", r.Step+1, n)
		}
	default:
		return item{}, false
	}
	return item{title: "Resume: " + where, desc: "where you left off last time; enter opens it there", open: o, gapAfter: true}, true
}

// setSize is "5 questions", "6 live scenarios", "1 question".
func setSize(s quiz.Set) string {
	live := 0
	for _, q := range s.Questions {
		if q.Kind == quiz.KindLive {
			live++
		}
	}
	if live == len(s.Questions) {
		return common.Count(live, "live scenario")
	}
	return common.Count(len(s.Questions), "question")
}

// setStatus is the learner's record of set s, in a few words. An attempt
// whose every question is answered is finished when its score is shown
// (opening the set shows it), so until then the entry says so rather than
// "unfinished".
func setStatus(p *progress.Progress, s quiz.Set) string {
	sp, ok := p.Sets[s.ID]
	if !ok || (sp.Attempts == 0 && len(sp.Answers) == 0) {
		return "not taken yet"
	}
	if sp.Next == len(s.Questions) && len(sp.Answers) > 0 {
		return "all answered: enter shows the score"
	}
	if sp.Attempts == 0 {
		return fmt.Sprintf("%d answered, unfinished", len(sp.Answers))
	}
	return fmt.Sprintf("best %.0f%% · last %.0f%% · %s", sp.Best*100, sp.LastScore*100, common.Count(sp.Attempts, "attempt"))
}

func blurb(p *lessons.Page) string {
	if p.Kind == lessons.KindInterview {
		return "the 30-second answer, the deeper answer and the counter-questions"
	}
	return "why a retried booking must not book twice, and how a key in the row prevents it"
}

// brokenCount is how many scenarios have a broken variant.
func brokenCount() int {
	n := 0
	for _, s := range sim.Scenarios() {
		if s.HasBroken() {
			n++
		}
	}
	return n
}

// Init starts the spinner of the database line.
func (m *Model) Init() tea.Cmd { return m.spin.Tick }

// Title names the page.
func (m *Model) Title() string { return "learn" }

// Stand is the home page, on screen: no place of its own to come
// back to, so the spot saved before stays.
func (m *Model) Stand() common.Stand {
	return common.Stand{At: progress.Place{Page: progress.PageHome}, Reopens: true, Keep: true}
}

// Update moves the cursor, opens the entry under it, and spins while the
// database starts.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := m.c.Keys
		entries := m.entries()
		i := m.cursor(entries)
		switch {
		case key.Matches(msg, k.Up):
			m.selected = entries[(i+len(entries)-1)%len(entries)].title
		case key.Matches(msg, k.Down):
			m.selected = entries[(i+1)%len(entries)].title
		case key.Matches(msg, k.Open) && entries[i].open.Page != "":
			return common.OpenCmd(entries[i].open)
		}
	case spinner.TickMsg:
		if ready, _, err := m.c.DB.Status(); ready || err != nil {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	}
	return nil
}

// KeyMap is the menu's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	return common.Bindings{
		Short: []key.Binding{k.Open, k.Up, k.Down}, // most important first; the root adds help and quit
		Full:  [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Help, k.Quit}},
	}
}

// View draws the menu, the entry's description, the notices and the
// database line; the menu scrolls when they leave it too little room.
func (m *Model) View() string {
	st := m.c.Styles
	w := m.c.Width
	entries := m.entries()
	cur := m.cursor(entries)
	head := st.Title.Render("learn") + st.Subtle.Render(" · idempotency keys for booking retries") // 44 cells: fits the smallest window

	// The menu's lines, and the line of the cursor among them; the blank
	// lines between its groups go first when room is short.
	menu := func(gaps bool) (lines []string, at int) {
		for i, it := range entries {
			if i == cur {
				at = len(lines)
			}
			lines = append(lines, m.entry(it, i == cur)...)
			if gaps && it.gapAfter && i < len(entries)-1 {
				lines = append(lines, "")
			}
		}
		return lines, at
	}

	// The foot: the description (as tall as the tallest, so the menu does
	// not move with the cursor), the notices and the database line.
	wrap := lipgloss.NewStyle().Width(max(1, w))
	desc := wrap.Render(entries[cur].desc)
	descHeight := 0
	for _, it := range entries {
		descHeight = max(descHeight, lipgloss.Height(wrap.Render(it.desc)))
	}
	foot := []string{""}
	foot = append(foot, strings.Split(st.Subtle.Render(desc), "\n")...)
	for range descHeight - lipgloss.Height(desc) {
		foot = append(foot, "")
	}
	foot = append(foot, "")
	for _, n := range m.c.Progress.Notices() {
		foot = append(foot, strings.Split(st.Warn.Render(common.Hang("! ", n, w)), "\n")...)
	}
	foot = append(foot, strings.Split(m.dbLine(), "\n")...)

	room := m.c.Body() - 2 - len(foot)
	lines, at := menu(true)
	if len(lines) > room {
		lines, at = menu(false)
	}
	out := append([]string{head, ""}, scroll(lines, at, room, st)...)
	return strings.Join(append(out, foot...), "\n")
}

// entry is one menu entry's lines: the title, wrapped when it and its
// status do not fit on one line, the status after its last line.
func (m *Model) entry(it item, selected bool) []string {
	st := m.c.Styles
	w := m.c.Width
	status := ""
	if it.status != nil {
		status = it.status(m.c.Progress.Get())
	}
	sw := ansi.StringWidth(status)
	room := w - 2
	if sw > 0 {
		room = w - 2 - sw - 2
	}
	lines := strings.Split(common.Hang("  ", it.title, max(12, room+2)), "\n")
	for i, l := range lines {
		text := strings.TrimPrefix(l, "  ")
		switch {
		case selected && i == 0:
			lines[i] = st.Cursor.Render("▸ ") + st.Selected.Render(text)
		case selected:
			lines[i] = "  " + st.Selected.Render(text)
		default:
			lines[i] = "  " + text
		}
	}
	if last := len(lines) - 1; sw > 0 {
		gap := max(2, w-ansi.StringWidth(lines[last])-sw)
		lines[last] += strings.Repeat(" ", gap) + st.Subtle.Render(status)
	}
	return lines
}

// scroll shows room lines of menu around line at: all of them when they
// fit, else a window with "↑ n more" above and "↓ n more" below where
// lines are hidden.
func scroll(menu []string, at, room int, st *common.Styles) []string {
	if len(menu) <= room || room < 3 {
		return menu[:min(len(menu), max(room, 0))]
	}
	more := func(arrow string, n int) string { return st.Faint.Render(fmt.Sprintf("  %s %d more", arrow, n)) }
	body := room - 2
	top := min(max(0, at-body/2), len(menu)-body)
	switch {
	case top == 0: // nothing hidden above
		return append(menu[:room-1:room-1], more("↓", len(menu)-room+1))
	case top == len(menu)-body: // nothing hidden below
		top = len(menu) - room + 1
		return append([]string{more("↑", top)}, menu[top:]...)
	}
	out := append([]string{more("↑", top)}, menu[top:top+body]...)
	return append(out, more("↓", len(menu)-top-body))
}

// nbhyph is a hyphen the wrapping does not break at.
const nbhyph = "\u2011"

// dbLine tells where the database stands, wrapped: never cut.
func (m *Model) dbLine() string {
	st := m.c.Styles
	ready, took, err := m.c.DB.Status()
	switch {
	case err != nil:
		return m.hang("", st.Warn, "PostgreSQL unavailable: reading works; open a Play item to see why")
	case ready:
		return m.hang(st.Good.Render("●")+" ", st.Subtle, fmt.Sprintf("PostgreSQL ready in %.1fs: %s", took.Seconds(), m.c.DB.Describe()))
	}
	if _, downloading := m.c.DB.Download(); downloading {
		// One line that gives up its parts from the least useful as the
		// window narrows, the share in per cent last.
		return m.spin.View() + dbstatus.Line(st, m.c.DB, " PostgreSQL: ", m.c.Width-2)
	}
	return m.hang(m.spin.View()+" ", st.Subtle, "PostgreSQL: "+common.Ellipsis(m.c.DB.Progress()))
}

// hang writes text in style after mark (which may hold escapes), wrapped
// to the window at spaces only (a path such as /dev/shm/learn-123 stays
// whole), its further lines under the text.
func (m *Model) hang(mark string, style lipgloss.Style, text string) string {
	pad := strings.Repeat(" ", ansi.StringWidth(mark))
	text = strings.ReplaceAll(text, "-", nbhyph)
	lines := strings.Split(strings.ReplaceAll(common.Hang(pad, text, m.c.Width), nbhyph, "-"), "\n")
	for i, l := range lines {
		lines[i] = pad + style.Render(strings.TrimPrefix(l, pad))
	}
	lines[0] = mark + strings.TrimPrefix(lines[0], pad)
	return strings.Join(lines, "\n")
}
