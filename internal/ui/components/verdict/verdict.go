// Package verdict draws what a run means (a sim.Verdict): a line read in one
// second (✓ and the guarantee that held, or ✗ and the consequence in the
// user's terms, in the error colour), the invariants that failed, and the
// diagnosis in the lesson's Break-it columns: symptom, cause, where to look,
// fix. Every line wraps; nothing is cut.
package verdict

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// Headline is the verdict's first line: "✓ …" or "✗ …", wrapped to w cells,
// in the good or the error colour.
func Headline(st *common.Styles, v *sim.Verdict, w int) string {
	if v.Held {
		return st.Good.Bold(true).Render(common.Hang("✓ ", v.Says, w))
	}
	return st.Bad.Bold(true).Render(common.Hang("✗ ", v.Says, w))
}

// Render is the whole verdict in w cells: the headline, the failed
// invariants, and the diagnosis.
func Render(st *common.Styles, v *sim.Verdict, w int) string {
	if d := Details(st, v, w); d != "" {
		return Headline(st, v, w) + "\n" + d
	}
	return Headline(st, v, w)
}

// Details is the verdict under its headline, in w cells: the failed
// invariants and the diagnosis; "" when there are none.
func Details(st *common.Styles, v *sim.Verdict, w int) string {
	var lines []string
	for _, inv := range v.Failed {
		lines = append(lines, st.Bad.Render(common.Hang("  broken: ", inv.Name+" ("+inv.Detail+")", w)))
	}
	if d := v.Diagnosis; d != nil {
		if v.Held {
			lines = append(lines, st.Subtle.Render("  the mistake this design caught:"))
		}
		lines = append(lines, Diagnosis(st, d, w))
	}
	return strings.Join(lines, "\n")
}

// Diagnosis is the four Break-it columns, one labelled row each.
func Diagnosis(st *common.Styles, d *sim.Diagnosis, w int) string {
	row := func(label, text string) string {
		return common.Hang(st.Subtle.Render(label), text, w)
	}
	return strings.Join([]string{
		row("  symptom  ", d.Symptom),
		row("  cause    ", d.Cause),
		row("  look at  ", d.Where),
		row("  fix      ", d.Fix),
	}, "\n")
}

// Big is the verdict for the back of a room (presenter mode): the headline
// bold and centred in a double border in the verdict's colour, then the
// cause and the fix, in w cells.
func Big(st *common.Styles, v *sim.Verdict, w int) string {
	colour := st.Good
	mark := "✓"
	if !v.Held {
		colour, mark = st.Bad, "✗"
	}
	body := colour.Bold(true).Render(mark + "  " + strings.ToUpper(v.Says[:1]) + v.Says[1:])
	if d := v.Diagnosis; d != nil && !v.Held {
		body += "\n\n" + st.Caption.Render("Cause: ") + d.Cause + "\n" + st.Caption.Render("Fix: ") + d.Fix
	}
	return lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(colour.GetForeground()).
		Padding(1, 2).Width(w).Align(lipgloss.Center).Render(body)
}
