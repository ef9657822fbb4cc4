package lessons

import (
	"fmt"
	"regexp"
	"strings"
)

// This file reads GitHub-flavoured pipe tables, the format of the Break it
// section.

var tableDelimiter = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)

// IsTableDelimiter reports whether line is the line under a pipe table's
// header (| --- | :-: |), surrounding spaces allowed.
func IsTableDelimiter(line string) bool {
	return tableDelimiter.MatchString(strings.TrimSpace(line))
}

// TableCells splits one table row into trimmed cells, as written: leading
// and trailing pipes are optional, and "\|" is a pipe inside a cell, kept
// escaped (so a cell can be written back as Markdown). As in GFM, a pipe
// inside a code span still splits cells unless it is escaped. It is the
// one reading of a row: the page parser and the renderer both use it.
func TableCells(row string) []string {
	t := strings.TrimSpace(row)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// splitRow is TableCells with each "\|" read as the pipe it stands for.
func splitRow(line string) []string {
	cells := TableCells(line)
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, `\|`, "|")
	}
	return cells
}

// tableRowError is a problem found in a table, at a line index of the lines
// given to readTable.
type tableRowError struct {
	line int
	msg  string
}

// readTable finds the first pipe table in s, checks that its header holds
// exactly the wanted column names (ignoring case), and returns its body rows.
// found is false when s holds no table at all.
func readTable(lines []string, mask []bool, s span, want []string) (rows [][]string, found bool, err *tableRowError) {
	start := -1
	for i := s.start; i+1 < s.end; i++ {
		if !mask[i] && strings.Contains(lines[i], "|") && IsTableDelimiter(lines[i+1]) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false, nil
	}
	header := splitRow(lines[start])
	if len(header) != len(want) {
		return nil, true, &tableRowError{start, fmt.Sprintf("table header has %d columns, want %d: %s", len(header), len(want), strings.Join(want, " | "))}
	}
	for j, h := range header {
		if !strings.EqualFold(h, want[j]) {
			return nil, true, &tableRowError{start, fmt.Sprintf("table column %d is %q, want %q", j+1, h, want[j])}
		}
	}
	if n := len(splitRow(lines[start+1])); n != len(want) {
		return nil, true, &tableRowError{start + 1, fmt.Sprintf("table delimiter row has %d columns, want %d", n, len(want))}
	}
	for i := start + 2; i < s.end; i++ {
		if mask[i] || strings.TrimSpace(lines[i]) == "" || !strings.Contains(lines[i], "|") {
			break
		}
		cells := splitRow(lines[i])
		if len(cells) != len(want) {
			return nil, true, &tableRowError{i, fmt.Sprintf("table row has %d cells, want %d (write a literal pipe as \\|)", len(cells), len(want))}
		}
		for j, c := range cells {
			if c == "" {
				return nil, true, &tableRowError{i, fmt.Sprintf("table cell %q is empty", want[j])}
			}
		}
		rows = append(rows, cells)
	}
	return rows, true, nil
}
