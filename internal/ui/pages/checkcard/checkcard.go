// Package checkcard is learn check's scorecard screen: a row per scenario
// (✓, ✗, ? not checked, – not run) with its verdict, the cursor's row's
// failed invariants under the list, and Enter on a row for its sequence:
// every request the checker's proxy carried, drawn as the play screen
// draws a run (browser, learn's proxy, the API instances), with the fault
// the proxy applied and what came back. It is a program of its own
// (Run), since learn check needs no PostgreSQL of learn's: it reads a
// finished check.Result.
package checkcard

import (
	"context"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ttyin"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/sim/check"
)

// Model is the scorecard of one finished check.
type Model struct {
	res     *check.Result
	header  string
	styles  *common.Styles
	w, h    int
	row     int  // the row under the cursor
	detail  bool // the row's sequence is open
	scroll  int  // the first line of the sequence shown
	quitted bool
	ctrlC   bool // quit by Ctrl-C: an interrupt, not a quit
}

// New is the scorecard of res, headed by header (the URLs checked).
func New(res *check.Result, header string, dark bool) *Model {
	return &Model{res: res, header: header, styles: common.NewStyles(dark), w: 80, h: 24}
}

// Init does nothing: the check has run.
func (m *Model) Init() tea.Cmd { return nil }

// Update moves the cursor, opens and scrolls a row's sequence, and quits.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = common.CapSize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		switch k := msg.String(); {
		case k == "ctrl+c" || k == "q" || (k == "esc" && !m.detail):
			m.quitted, m.ctrlC = true, k == "ctrl+c"
			return m, tea.Quit
		case k == "esc" || k == "backspace" || k == "left" || (k == "enter" && m.detail):
			m.detail, m.scroll = false, 0
		case k == "enter" || k == "right":
			m.detail, m.scroll = len(m.res.Rows) > 0, 0
		case k == "up" || k == "k":
			if m.detail {
				m.scroll = max(m.scroll-1, 0)
			} else if m.row > 0 {
				m.row--
			}
		case k == "down" || k == "j":
			if m.detail {
				m.scroll = min(m.scroll+1, max(len(m.sequence())-m.bodyHeight(), 0))
			} else if m.row < len(m.res.Rows)-1 {
				m.row++
			}
		case k == "home" || k == "g":
			m.row, m.scroll = 0, 0
		case k == "end" || k == "G":
			if !m.detail {
				m.row = max(len(m.res.Rows)-1, 0)
			}
		}
	}
	return m, nil
}

// View draws the scorecard, or the open row's sequence.
func (m *Model) View() tea.View {
	if m.quitted {
		v := tea.NewView("")
		v.AltScreen = true
		return v
	}
	var body []string
	if m.detail {
		body = m.detailView()
	} else {
		body = m.cardView()
	}
	keys := "↑/↓ a row · enter its sequence · q quit"
	if m.detail {
		keys = "↑/↓ scroll · esc back to the scorecard · q quit"
	}
	for len(body) < m.h-1 {
		body = append(body, "")
	}
	v := tea.NewView(strings.Join(append(body[:m.h-1], m.styles.Help.Render(fit(keys, m.w))), "\n"))
	v.AltScreen = true
	v.WindowTitle = "learn check"
	return v
}

// mark is a row's mark in its colour.
func (m *Model) mark(s check.State) string {
	st := map[check.State]lipgloss.Style{check.Pass: m.styles.Good, check.Fail: m.styles.Bad, check.NotChecked: m.styles.Warn, check.NotRun: m.styles.Faint}[s]
	return st.Render(s.Mark())
}

// cardView is the header, a line per row, and the cursor's row's verdict
// and failed invariants, wrapped, within the screen: on a small one the
// rows scroll with the cursor, so that the verdict is read whole.
func (m *Model) cardView() []string {
	out := []string{m.styles.Title.Render(fit("learn check: "+m.header, m.w)), m.styles.Subtle.Render(fit(m.res.Summary+" · took "+m.res.Took, m.w)), ""}
	if len(m.res.Rows) == 0 {
		return out
	}
	titleW := 0
	for _, r := range m.res.Rows {
		titleW = max(titleW, ansi.StringWidth(r.Title))
	}
	titleW = min(titleW, m.w/2)
	r := m.res.Rows[m.row]
	detail := []string{"", m.styles.Caption.Render(fit(r.Title, m.w))}
	detail = append(detail, m.verdict(r)...)
	for _, l := range wrap("sends: "+r.Sends, m.w) {
		detail = append(detail, m.styles.Subtle.Render(l))
	}
	// The rows get what the header and the verdict leave, at least three.
	room := m.h - 1 - len(out) - len(detail)
	if least := min(3, len(m.res.Rows)); room < least {
		detail = detail[:max(len(detail)-(least-room), 0)]
		room = least
	}
	room = min(room, len(m.res.Rows))
	first := min(max(m.row-room/2, 0), len(m.res.Rows)-room)
	for i := first; i < first+room; i++ {
		r := m.res.Rows[i]
		line := fmt.Sprintf("%s %s  %s", m.mark(r.State), pad(fit(r.Title, titleW), titleW), check.Printable(r.Says))
		cursor := "  "
		if i == m.row {
			cursor = m.styles.Cursor.Render("› ")
		}
		out = append(out, cursor+fit(line, m.w-2))
	}
	return append(out, detail...)
}

// verdict is row r's verdict and failed invariants, wrapped to the
// screen's width.
func (m *Model) verdict(r check.Row) []string {
	out := wrap(check.Printable(r.Says), m.w)
	if r.Report != nil && !r.Power {
		for _, inv := range r.Report.Verdict.Failed {
			for _, l := range wrap("failed: "+inv.Name+" ("+check.Printable(inv.Detail)+")", m.w) {
				out = append(out, m.styles.Bad.Render(l))
			}
		}
	}
	return out
}

// detailHead is the open row's title and its verdict, wrapped.
func (m *Model) detailHead() []string {
	r := m.res.Rows[m.row]
	return append([]string{m.styles.Title.Render(fit(r.Title+" "+r.State.Mark(), m.w))}, m.verdict(r)...)
}

// bodyHeight is how many lines of a sequence fit under its header (the
// row's title and verdict, and the lanes).
func (m *Model) bodyHeight() int {
	return max(m.h-1-len(m.detailHead())-1, 1)
}

// detailView is the open row's title, verdict and its sequence from the
// line scrolled to.
func (m *Model) detailView() []string {
	out := m.detailHead()
	seq := m.sequence()
	out = append(out, seq[:min(1, len(seq))]...) // the lanes' header stays
	body := seq[min(1, len(seq)):]
	from := min(m.scroll, len(body))
	return append(out, body[from:min(from+m.bodyHeight(), len(body))]...)
}

// sequence is the open row's passages drawn as arrows between the
// browser, learn's proxy and the API instances.
func (m *Model) sequence() []string {
	r := m.res.Rows[m.row]
	lanes := []seqdiag.Lane{{ID: "browser", Name: "browser"}, {ID: "proxy", Name: "learn's proxy"}, {ID: "api-1", Name: "api-1"}}
	for _, p := range r.Passages {
		if p.Instance == "api-2" {
			lanes = append(lanes, seqdiag.Lane{ID: "api-2", Name: "api-2"})
			break
		}
	}
	d := seqdiag.New(lanes, m.w)
	out := []string{d.Header()}
	if len(r.Passages) > 0 {
		p := r.Passages[0]
		out = append(out, m.styles.Subtle.Render(fit(fmt.Sprintf("each try is %s %s, #intent.try (or intent.copy.try) with its key", p.Method, p.Path), m.w)))
	}
	if len(r.Passages) == 0 {
		return append(append(out, ""), wrap("no request reached learn's proxy: "+r.Says, m.w)...)
	}
	for _, p := range r.Passages {
		key := p.Key
		if i := strings.IndexByte(key, '-'); i > 0 {
			key = key[:i]
		}
		tryLabel := "#" + p.RequestID
		if m.w/len(lanes) >= 20 { // room for the key between two lanes
			tryLabel += " " + key
		}
		out = append(out,
			d.Arrow(seqdiag.Arrow{From: "browser", To: "proxy", Label: tryLabel}),
			d.Arrow(seqdiag.Arrow{From: "proxy", To: p.Instance, Label: shortFault(p.Fault)}))
		answer := "no answer"
		if p.Status != 0 {
			answer = fmt.Sprintf("%d %s", p.Status, bookingOf(p.Answer))
		}
		out = append(out, d.Arrow(seqdiag.Arrow{From: p.Instance, To: "proxy", Label: strings.TrimSpace(answer), Dashed: true}))
		switch {
		case p.Fault == "answer 502 in its place":
			out = append(out, d.Arrow(seqdiag.Arrow{From: "proxy", To: "browser", Label: "502 (API acted)", Dashed: true}))
		case p.Delivered:
			out = append(out, d.Arrow(seqdiag.Arrow{From: "proxy", To: "browser", Label: strings.TrimSpace(answer), Dashed: true}))
		default:
			out = append(out, d.Arrow(seqdiag.Arrow{From: "proxy", To: "browser", Label: "reset", Lost: true}))
		}
	}
	return out
}

// shortFault is what the proxy did, in few enough cells for an arrow
// between two lanes at 60 columns.
func shortFault(f string) string {
	if s, ok := map[string]string{"lose the answer": "lose", "answer 502 in its place": "502 it",
		"send together": "together", "cut the answer's headers": "cut headers"}[f]; ok {
		return s
	}
	return f
}

// bookingOf is the booking id or problem code in an answer's body, for
// an arrow's label.
func bookingOf(body string) string {
	for _, field := range []string{`"id": "`, `"code": "`} {
		if i := strings.Index(body, field); i >= 0 {
			rest := body[i+len(field):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// fit cuts s to w cells.
func fit(s string, w int) string { return ansi.Truncate(s, max(w, 1), "…") }

// pad fills s with spaces to w cells.
func pad(s string, w int) string { return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0)) }

// wrap breaks s into lines of at most w cells.
func wrap(s string, w int) []string {
	return strings.Split(ansi.Wordwrap(s, max(w, 10), ""), "\n")
}

// Run shows the scorecard of res in the terminal (in, out) until q, Esc
// or Ctrl-C, or until ctx ends; interrupted says it was Ctrl-C. Its input
// goes through learn's guard (ttyin), as the app's does.
func Run(ctx context.Context, res *check.Result, header string, in io.Reader, out io.Writer) (interrupted bool, err error) {
	m := New(res, header, true)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(ttyin.Wrap(in)), tea.WithOutput(out), tea.WithoutSignalHandler())
	_, err = p.Run()
	if ctx.Err() != nil {
		return false, nil // the caller says what ended it
	}
	return m.ctrlC, err
}
