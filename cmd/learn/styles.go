package main

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles are the app's Lip Gloss styles for one theme. They never ask the
// terminal anything: the theme comes from --theme (dark by default), and the
// colour profile (NO_COLOR included) is applied by Bubble Tea's renderer.
type styles struct {
	dark bool

	title, subtle, faint, help    lipgloss.Style
	item, selected, cursor        lipgloss.Style
	box, boxTitle                 lipgloss.Style
	caption, current              lipgloss.Style
	good, bad, warn, lost, accent lipgloss.Style
	sqlTag, logTag                lipgloss.Style
}

func newStyles(dark bool) *styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkHex string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkHex)) }
	accent := c("#5A3FD6", "#B4A2FF")
	subtle := c("#6B6B6B", "#9A9A9A")
	s := &styles{dark: dark}
	s.title = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.subtle = lipgloss.NewStyle().Foreground(subtle)
	s.faint = lipgloss.NewStyle().Foreground(c("#9A9A9A", "#6B6B6B"))
	s.help = lipgloss.NewStyle().Foreground(subtle)
	s.item = lipgloss.NewStyle().PaddingLeft(2)
	s.selected = lipgloss.NewStyle().PaddingLeft(0).Bold(true).Foreground(accent)
	s.cursor = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.box = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(subtle)
	s.boxTitle = lipgloss.NewStyle().Bold(true)
	s.caption = lipgloss.NewStyle().Bold(true)
	s.current = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.good = lipgloss.NewStyle().Foreground(c("#1B7F3B", "#6BD68A"))
	s.bad = lipgloss.NewStyle().Foreground(c("#B3261E", "#FF7B72"))
	s.warn = lipgloss.NewStyle().Foreground(c("#8A5A00", "#E3B341"))
	s.lost = lipgloss.NewStyle().Foreground(c("#B3261E", "#FF7B72")).Bold(true)
	s.accent = lipgloss.NewStyle().Foreground(accent)
	s.sqlTag = lipgloss.NewStyle().Foreground(c("#0B6E99", "#79C0FF"))
	s.logTag = lipgloss.NewStyle().Foreground(c("#8A5A00", "#E3B341"))
	return s
}
