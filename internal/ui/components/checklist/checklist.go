// Package checklist draws what a learner compares and ticks after writing
// (or saying) an answer: their text, the model answer one above the other,
// then the model's key points to tick, each point their text does not
// mention marked, and the rule that grades the ticks (package quiz:
// GradeShort, GradeSpoken).
package checklist

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
)

// NotMentioned marks a key point the learner's text does not mention.
const NotMentioned = "· not in your text"

// Checklist is one answer to compare and tick.
type Checklist struct {
	// Typed is what the learner typed.
	Typed string
	// Spoken says that an answer with nothing typed was given aloud (the
	// drill): it is graded by the ticks alone and nothing is marked.
	Spoken bool
	Model  string
	Points []string
	Cues   []quiz.Cue
	Ticked []bool
	// Cursor is the point under the cursor; -1 for none (graded).
	Cursor int
}

// aloud reports whether the answer is one said aloud: nothing typed, and
// the screen takes spoken answers.
func (c Checklist) aloud() bool { return c.Spoken && strings.TrimSpace(c.Typed) == "" }

// Rule is the grading rule the screen states above the points.
func (c Checklist) Rule() string {
	if c.aloud() {
		return "Nothing typed, so nothing to check: you said it aloud, and your ticks grade it as they are. Tick the points you made (space), then enter."
	}
	if strings.TrimSpace(c.Typed) == "" {
		return fmt.Sprintf("Tick the points your answer made (space), then enter. Nothing typed: each ticked point counts %s.", half())
	}
	return fmt.Sprintf("Tick the points your answer made (space), then enter. A point marked “%s” counts %s when ticked.", strings.TrimPrefix(NotMentioned, "· "), half())
}

// Half is what a ticked point the text does not mention counts, in words
// ("half").
func Half() string { return half() }

func half() string {
	if quiz.UnsaidCredit == 0.5 {
		return "half"
	}
	return fmt.Sprintf("%.0f%%", quiz.UnsaidCredit*100)
}

// View draws c in w cells, and returns the lines (0-based, first and
// last) of the point under the cursor, for a scroller to keep in view.
func (c Checklist) View(st *common.Styles, w int) (view string, from, to int) {
	wrap := lipgloss.NewStyle().Width(min(w, 100))
	var b strings.Builder
	switch typed := strings.TrimSpace(c.Typed); {
	case typed != "":
		b.WriteString(st.Subtle.Render("You wrote:") + "\n" + wrap.Render(typed) + "\n\n")
	case !c.aloud():
		b.WriteString(st.Subtle.Render("You wrote nothing.") + "\n\n")
	}
	b.WriteString(st.Subtle.Render("The model answer:") + "\n" + wrap.Render(c.Model) + "\n\n")
	b.WriteString(st.Subtle.Render(common.Hang("", c.Rule(), min(w, 100))) + "\n")
	mentioned := quiz.Mentions(c.Typed, c.Cues)
	for i, p := range c.Points {
		cur := "  "
		if i == c.Cursor {
			cur = st.Cursor.Render("▸ ")
		}
		box := "[ ] "
		if c.Ticked[i] {
			box = "[x] "
		}
		if !c.aloud() && !mentioned[i] {
			p += " " + st.Warn.Render(NotMentioned)
		}
		row := common.Hang(cur+box, p, w-2)
		if i == c.Cursor {
			from = lipgloss.Height(b.String()) - 1
			to = from + lipgloss.Height(row) - 1
		}
		b.WriteString(row + "\n")
	}
	return b.String(), from, to
}
