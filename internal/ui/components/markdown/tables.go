package markdown

import (
	"strings"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
)

// fitTables gives each table of md (whose inline code is already kept
// whole) the form that is readable at r's width: the table itself when
// Glamour's table renderer keeps every word and code span whole, else one
// list item a row, each cell on a line of its own after its column's name.
// Glamour's table renderer (Lip Gloss's table) narrows columns without
// regard for the longest word, and then cuts words at the column's edge:
// at 58 columns `Engine.BookTicket` came out as "Engine.BookTicke" over
// "t". Tables are taken to be at the top level of the page, as the
// lessons have them; tables and fences are read as the page parser reads
// them (lessons.Fences, lessons.IsTableDelimiter, lessons.TableCells).
func fitTables(r *glamour.TermRenderer, md string) (string, error) {
	lines := strings.Split(md, "\n")
	fenced, _ := lessons.Fences(lines)
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if fenced[i] || !strings.Contains(l, "|") || i+1 >= len(lines) || fenced[i+1] || !lessons.IsTableDelimiter(lines[i+1]) {
			out = append(out, l)
			continue
		}
		end := i + 2
		for end < len(lines) && !fenced[end] && strings.TrimSpace(lines[end]) != "" && strings.Contains(lines[end], "|") {
			end++
		}
		table := lines[i:end]
		whole, err := keepsWordsWhole(r, table)
		if err != nil {
			return "", err
		}
		if whole {
			out = append(out, table...)
		} else {
			out = append(out, tableAsList(table)...)
		}
		i = end - 1
	}
	return strings.Join(out, "\n"), nil
}

// keepsWordsWhole renders table alone and reports whether every word and
// code span of its cells is found whole on the rendered lines, as often as
// the table holds it.
func keepsWordsWhole(r *glamour.TermRenderer, table []string) (bool, error) {
	out, err := r.Render(strings.Join(table, "\n"))
	if err != nil {
		return false, err
	}
	rendered := strings.Split(ansi.Strip(out), "\n")
	need := map[string]int{}
	for i, row := range table {
		if i == 1 {
			continue // the delimiter
		}
		for _, cell := range lessons.TableCells(row) {
			for _, w := range strings.Fields(cell) {
				if strings.Contains(w, "](") {
					continue // a link: Glamour writes its text and address apart
				}
				w = strings.Trim(strings.NewReplacer("`", "", "*", "").Replace(w), "_()[]<>\"“”'")
				if ansi.StringWidth(w) > 1 {
					need[w]++
				}
			}
		}
	}
	for w, n := range need {
		have := 0
		for _, l := range rendered {
			have += strings.Count(l, w)
		}
		if have < n {
			return false, nil
		}
	}
	return true, nil
}

// tableAsList writes a table's rows as list items: the first cell after
// its column's name, the others each on a line of its own below it.
func tableAsList(table []string) []string {
	head := lessons.TableCells(table[0])
	var out []string
	for _, row := range table[2:] {
		prefix := "- "
		for j, c := range lessons.TableCells(row) {
			if c == "" {
				continue
			}
			if j < len(head) && head[j] != "" {
				c = "**" + head[j] + ":** " + c
			}
			out = append(out, prefix+c)
			prefix = "  "
		}
	}
	return out
}
