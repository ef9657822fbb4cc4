package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// View draws the header, the attendees, the poll and the feed, or the list
// of screens to send everyone to.
func (m *Model) View() string {
	w, h := m.c.Width, m.c.Body()
	header := m.header(w)
	if m.help {
		return header + "\n\n" + m.helpView(w)
	}
	if m.picking {
		return header + "\n" + m.pickView(w, h-lines(header)-1)
	}
	poll := m.pollView(w)
	feed := m.feedView(w, 4)
	room := h - lines(header) - 1 - lines(poll) - lines(feed) - 2
	if room < 4 { // a small window: the poll and the attendees first
		feed = ""
		room = h - lines(header) - 1 - lines(poll) - 1
	}
	parts := []string{header, m.table(w, room)}
	if poll != "" {
		parts = append(parts, poll)
	}
	if feed != "" {
		parts = append(parts, feed)
	}
	return strings.Join(parts, "\n\n")
}

func lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// header is the title with the room's count and the time, how to join,
// and the PostgreSQL connections in use.
func (m *Model) header(w int) string {
	st := m.c.Styles
	snap := m.snap
	took := m.now.Sub(snap.Started).Truncate(time.Second)
	if took < 0 {
		took = 0
	}
	title := st.Title.Render("Workshop") + st.Subtle.Render(fmt.Sprintf(" · %d of %d connected · %s", snap.Connected(), snap.Max, clock(took)))
	join := "join: " + strings.Join(m.info.Join, "  or  ")
	if m.info.Code != "" {
		join += "  ·  code " + st.Current.Render(m.info.Code)
	}
	out := []string{common.Truncate(title, w), common.Truncate(st.Subtle.Render(join), w)}
	var h pgtemp.Health
	if m.info.Health != nil {
		h = m.info.Health()
	}
	switch b := m.info.Budget; {
	case h.State == pgtemp.Restarting:
		out = append(out, st.Warn.Render(common.Truncate("PostgreSQL is down ("+h.Exit+"): learn is starting it again; the attendees' runs wait for it", w)))
	case h.State == pgtemp.Gone:
		out = append(out, st.Bad.Render(common.Truncate("PostgreSQL is gone ("+h.Exit+"): no run can go on; reading and the quizzes without a run still work", w)))
	case b != nil:
		s := b.Stats()
		line := fmt.Sprintf("PostgreSQL: the runs hold %d of %s", s.Used, count(s.Total, "connection"))
		if s.Waiting > 0 {
			line += fmt.Sprintf(" · %s waiting for theirs", count(s.Waiting, "run"))
		}
		out = append(out, st.Subtle.Render(common.Truncate(line, w)))
	}
	if m.note != "" {
		out = append(out, st.Warn.Render(common.Truncate(m.note, w)))
	}
	return strings.Join(out, "\n")
}

func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// table is the attendees, one a line, in at most h lines: name, terminal
// size (the size their app is drawn at, "500x200+" when their terminal is
// larger: room.Attendee.Capped), the screen they are on and their scores.
func (m *Model) table(w, h int) string {
	st := m.c.Styles
	as := m.snap.Attendees
	if len(as) == 0 {
		return st.Subtle.Render("Nobody yet: give the room the ssh line and the code above.")
	}
	nameW := 4
	for _, a := range as {
		nameW = max(nameW, ansi.StringWidth(a.Name))
	}
	nameW = min(nameW, 16)
	const sizeW, scoreW = 8, 11 // 500x200+, the largest size drawn, capped
	screenW := max(10, w-nameW-sizeW-2*scoreW-8)
	row := func(name, size, screen, cp, bi string) string {
		return pad(name, nameW) + "  " + pad(size, sizeW) + "  " + pad(screen, screenW) + "  " + pad(cp, scoreW) + "  " + bi
	}
	out := []string{st.BoxTitle.Render(common.Truncate(row("name", "size", "screen", "checkpoint", "break it"), w))}
	rows := max(1, h-1)
	top := min(m.top, max(0, len(as)-rows))
	shown := as[top:min(len(as), top+rows)]
	if top+rows < len(as) && rows > 1 { // the last line says how many more
		shown = shown[:len(shown)-1]
	}
	for _, a := range shown {
		size, screen := fmt.Sprintf("%dx%d", a.Width, a.Height), screenOf(a)
		if a.Capped { // their terminal is larger: the app is drawn at this size
			size += "+"
		}
		line := row(a.Name, size, screen, score(a.Checkpoint), score(a.BreakIt))
		if !a.Connected {
			line = st.Faint.Render(row(a.Name, "", "left "+a.Left.Format("15:04"), score(a.Checkpoint), score(a.BreakIt)))
		}
		out = append(out, common.Truncate(line, w))
	}
	if more := len(as) - top - len(shown); more > 0 {
		out = append(out, st.Subtle.Render(fmt.Sprintf("… %d more (↓ scrolls)", more)))
	}
	return strings.Join(out, "\n")
}

// screenOf says where an attendee is: "home", or the screen's title, and
// the question of a quiz, the design of a play screen. Which screen it is
// comes from the place (a.At), never from the title.
func screenOf(a room.Attendee) string {
	switch a.At.Page {
	case progress.PageQuiz:
		return fmt.Sprintf("%s, question %d", a.Title, a.At.Step+1)
	case progress.PagePlay:
		if a.At.Variant != "" && a.At.Variant != "correct" {
			return a.Title + " (" + a.At.Variant + ")"
		}
	}
	if a.At.Page == "" || a.At.Page == progress.PageHome {
		return "home"
	}
	return a.Title
}

// score is "3/5 80%", or "-" before any answer.
func score(s room.Score) string {
	if s.Answered == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d %.0f%%", s.Answered, s.Of, s.Percent())
}

// pollView is the poll of the open question: its prompt, a bar per
// choice (the right ones marked ✓), and who has not answered yet.
func (m *Model) pollView(w int) string {
	p := m.snap.Poll
	if p == nil {
		return ""
	}
	st := m.c.Styles
	how := "answered last"
	switch {
	case p.Opened:
		how = "open"
	case p.Closed:
		how = "closed"
	}
	title := st.BoxTitle.Render("Poll: "+p.Title) + st.Subtle.Render(fmt.Sprintf(" (%s) · %d answered", how, p.Answered))
	out := []string{common.Truncate(title, w), st.Subtle.Render(common.Truncate(p.Prompt, w))}
	most := 1
	for _, b := range p.Bars {
		most = max(most, b.Count)
	}
	barW := min(24, max(8, w/4))
	labelW := max(12, w-barW-8)
	for i, b := range p.Bars {
		label := b.Label
		if p.Kind != quiz.KindOrder && p.Kind != quiz.KindShort && p.Kind != quiz.KindPredict {
			label = fmt.Sprintf("%c %s", 'A'+i, label)
		}
		n := b.Count * barW / most
		bar := strings.Repeat("█", n) + st.Faint.Render(strings.Repeat("░", barW-n))
		mark := " "
		if b.Correct {
			mark = st.Good.Render("✓")
		}
		out = append(out, fmt.Sprintf("%s %s %3d %s", pad(label, labelW), bar, b.Count, mark))
	}
	if len(p.Waiting) > 0 && p.Closed {
		out = append(out, st.Subtle.Render(common.Truncate("had not answered at the close: "+strings.Join(p.Waiting, ", "), w)))
	} else if len(p.Waiting) > 0 {
		out = append(out, st.Warn.Render(common.Truncate("not answered yet: "+strings.Join(p.Waiting, ", "), w)))
	} else if p.Answered > 0 {
		out = append(out, st.Good.Render("everyone connected has answered"))
	}
	return strings.Join(out, "\n")
}

// feedView is the newest n lines of the feed.
func (m *Model) feedView(w, n int) string {
	feed := m.snap.Feed
	if len(feed) == 0 {
		return ""
	}
	st := m.c.Styles
	var out []string
	for _, e := range feed[max(0, len(feed)-n):] {
		out = append(out, st.Faint.Render(e.At.Format("15:04:05"))+" "+common.Truncate(e.Text, w-9))
	}
	return strings.Join(out, "\n")
}

// helpView is every key of the dashboard, one a line, grouped: what ? shows.
func (m *Model) helpView(w int) string {
	st := m.c.Styles
	out := []string{st.BoxTitle.Render("Keys")}
	for i, group := range fullKeys {
		if i == 1 {
			out = append(out, "", st.Subtle.Render("In the list of screens (o):"))
		}
		for _, b := range group {
			h := b.Help()
			out = append(out, common.Truncate(st.Accent.Render(pad(h.Key, 8))+" "+h.Desc, w))
		}
	}
	out = append(out, "", st.Subtle.Render("? or esc goes back to the room; q does not end the workshop"))
	return strings.Join(out, "\n")
}

// pickView is the list of screens to send everyone to in h lines, the
// cursor's in view; when they do not all fit, a line says how many are
// above and how many below.
func (m *Model) pickView(w, h int) string {
	st := m.c.Styles
	n := len(m.targets)
	out := []string{st.BoxTitle.Render("Send everyone to:") + st.Subtle.Render(fmt.Sprintf("  %d of %d", m.cursor+1, n))}
	avail := max(1, h-1)
	top, rows := 0, n
	if n > avail {
		rows = max(1, avail-1) // a line for "▼ more"
		window := func() int { return max(0, min(m.cursor-rows/2, n-rows)) }
		if top = window(); top > 0 && rows > 1 {
			rows-- // and one for "▲ above"
			top = window()
		}
	}
	if top > 0 {
		out = append(out, st.Subtle.Render(fmt.Sprintf("▲ %d more above", top)))
	}
	for i := top; i < min(n, top+rows); i++ {
		t := m.targets[i]
		if i == m.cursor {
			out = append(out, st.Selected.Render(common.Truncate("> "+t.label, w)))
			continue
		}
		out = append(out, st.Item.Render(common.Truncate(t.label, w-2)))
	}
	if below := n - top - rows; below > 0 {
		out = append(out, st.Subtle.Render(fmt.Sprintf("▼ %d more below", below)))
	}
	return strings.Join(out, "\n")
}

// cut is s in at most n cells.
func cut(s string, n int) string { return common.Truncate(s, n) }

// pad is s cut or filled with spaces to n cells.
func pad(s string, n int) string {
	s = cut(s, n)
	return s + strings.Repeat(" ", max(0, n-ansi.StringWidth(s)))
}
