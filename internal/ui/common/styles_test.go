package common

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"charm.land/lipgloss/v2"
)

// luminance is the WCAG 2 relative luminance of c.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// contrast is the WCAG 2 contrast ratio of two colours, from 1 to 21.
func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func TestContrastFormula(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#777777", "#ffffff", 4.48}, // the classic just-too-light grey
		{"#767676", "#ffffff", 4.54},
		{"#ffffff", "#ffffff", 1},
	} {
		if got := contrast(lipgloss.Color(tc.a), lipgloss.Color(tc.b)); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, want %.2f", tc.a, tc.b, got, tc.want)
		}
	}
}

// The hints (subtle, faint, help) and the footer's keys stay readable on a
// projector: a WCAG contrast of at least 4.5:1 against any background the
// theme is meant for. Assumed backgrounds: the dark theme on #000000 to
// #1e1e1e (black, and the usual dark terminal greys), the light one on
// #ffffff to #f5f5f5. Contrast only falls as the background comes nearer
// the text, so the lightest dark and the darkest light background decide.
func TestHintsContrastInBothThemes(t *testing.T) {
	backgrounds := map[bool][]string{true: {"#000000", "#1e1e1e"}, false: {"#ffffff", "#f5f5f5"}}
	for _, dark := range []bool{true, false} {
		s := NewStyles(dark)
		h := s.HelpStyles()
		styles := map[string]lipgloss.Style{
			"Subtle": s.Subtle, "Faint": s.Faint, "Help": s.Help,
			"footer key": h.ShortKey, "footer description": h.ShortDesc, "footer separator": h.ShortSeparator,
			"footer ellipsis": h.Ellipsis, "help key": h.FullKey, "help description": h.FullDesc,
			"placeholder": s.Placeholder,
		}
		for name, st := range styles {
			fg := st.GetForeground()
			if _, none := fg.(lipgloss.NoColor); none || fg == nil {
				t.Errorf("dark=%v %s: no foreground colour", dark, name)
				continue
			}
			for _, bg := range backgrounds[dark] {
				if c := contrast(fg, lipgloss.Color(bg)); c < 4.5 {
					t.Errorf("dark=%v %s %s on %s: contrast %.2f:1, want at least 4.5:1", dark, name, hex(fg), bg, c)
				}
			}
		}
	}
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
