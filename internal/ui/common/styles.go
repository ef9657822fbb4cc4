package common

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles are the app's Lip Gloss styles for one theme. They never ask the
// terminal anything: the theme comes from --theme (dark by default), and the
// colour profile (NO_COLOR included) is applied by Bubble Tea's renderer.
type Styles struct {
	Dark bool

	Title, Subtle, Faint, Help    lipgloss.Style
	Placeholder                   lipgloss.Style
	Item, Selected, Cursor        lipgloss.Style
	Box, BoxTitle                 lipgloss.Style
	Caption, Current              lipgloss.Style
	Good, Bad, Warn, Lost, Accent lipgloss.Style
	SQLTag, LogTag                lipgloss.Style
	// Match marks a search match in the reader; CurrentMatch the one the
	// search is at. Both are text attributes, seen without colour too.
	Match, CurrentMatch lipgloss.Style
}

// NewStyles returns the styles of the dark theme, or of the light one.
func NewStyles(dark bool) *Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkHex string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkHex)) }
	accent := c("#5A3FD6", "#B4A2FF")
	// The hints are readable on a projector: at least 4.5:1 (WCAG) on any
	// background from #000000 to #1e1e1e (dark) or #f5f5f5 to #ffffff
	// (light); faint is a step dimmer than subtle, still above it.
	subtle := c("#595959", "#A8A8A8")
	s := &Styles{Dark: dark}
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Subtle = lipgloss.NewStyle().Foreground(subtle)
	s.Faint = lipgloss.NewStyle().Foreground(c("#6E6E6E", "#8A8A8A"))
	s.Help = lipgloss.NewStyle().Foreground(subtle)
	s.Placeholder = s.Faint
	s.Item = lipgloss.NewStyle().PaddingLeft(2)
	s.Selected = lipgloss.NewStyle().PaddingLeft(0).Bold(true).Foreground(accent)
	s.Cursor = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.Box = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(subtle)
	s.BoxTitle = lipgloss.NewStyle().Bold(true)
	s.Caption = lipgloss.NewStyle().Bold(true)
	s.Current = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Good = lipgloss.NewStyle().Foreground(c("#1B7F3B", "#6BD68A"))
	s.Bad = lipgloss.NewStyle().Foreground(c("#B3261E", "#FF7B72"))
	s.Warn = lipgloss.NewStyle().Foreground(c("#8A5A00", "#E3B341"))
	s.Lost = lipgloss.NewStyle().Foreground(c("#B3261E", "#FF7B72")).Bold(true)
	s.Accent = lipgloss.NewStyle().Foreground(accent)
	s.SQLTag = lipgloss.NewStyle().Foreground(c("#0B6E99", "#79C0FF"))
	s.LogTag = lipgloss.NewStyle().Foreground(c("#8A5A00", "#E3B341"))
	s.Match = lipgloss.NewStyle().Underline(true)
	s.CurrentMatch = lipgloss.NewStyle().Reverse(true).Bold(true)
	return s
}

// HelpStyles are the footer's and the ? overlay's styles: the keys in the
// help colour, the descriptions and separators faint.
func (s *Styles) HelpStyles() help.Styles {
	key := s.Help.Bold(true)
	return help.Styles{
		Ellipsis: s.Faint, ShortKey: key, ShortDesc: s.Faint, ShortSeparator: s.Faint,
		FullKey: key, FullDesc: s.Faint, FullSeparator: s.Faint,
	}
}
