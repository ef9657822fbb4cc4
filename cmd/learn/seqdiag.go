package main

import (
	"strings"

	"github.com/rivo/uniseg"
)

// seqLane is one participant column of a sequence diagram.
type seqLane struct{ ID, Name string }

// seqArrow is one message of a sequence diagram, drawn on one line. From ==
// To is a note beside that lane.
type seqArrow struct {
	From, To string
	Label    string
	Dashed   bool // a reply
	Lost     bool // cut on the way: the answer never arrives
}

// seqDiagram draws sequence diagrams as text, each line exactly width cells.
type seqDiagram struct {
	lanes []seqLane
	width int
	cols  []int // cell column of each lane's vertical line
}

func newSeqDiagram(lanes []seqLane, width int) seqDiagram {
	d := seqDiagram{lanes: lanes, width: max(width, 8)}
	n := len(lanes)
	if n == 0 {
		return d
	}
	margin := 0
	for _, l := range lanes {
		margin = max(margin, uniseg.StringWidth(l.Name)/2)
	}
	margin = min(margin+1, d.width/(2*n))
	d.cols = make([]int, n)
	if n == 1 {
		d.cols[0] = margin
		return d
	}
	span := d.width - 1 - 2*margin
	for i := range lanes {
		d.cols[i] = margin + i*span/(n-1)
	}
	return d
}

func (d seqDiagram) col(id string) (int, bool) {
	for i, l := range d.lanes {
		if l.ID == id {
			return d.cols[i], true
		}
	}
	return 0, false
}

// cells is a line of display cells; a wide grapheme fills its first cell and
// leaves "" in the next.
type cells []string

func blank(width int) cells {
	c := make(cells, width)
	for i := range c {
		c[i] = " "
	}
	return c
}

func (c cells) String() string { return strings.Join(c, "") }

// put writes s from cell x on, clipped to [x, limit); it returns the cell
// after the last one written.
func (c cells) put(x, limit int, s string) int {
	limit = min(limit, len(c))
	state := -1
	for s != "" && x < limit {
		var g string
		var w int
		g, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		if w == 0 {
			continue
		}
		if x+w > limit {
			break
		}
		c[x] = g
		for i := 1; i < w; i++ {
			c[x+i] = ""
		}
		x += w
	}
	return x
}

// fit shortens s with "…" so it takes at most w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if uniseg.StringWidth(s) <= w {
		return s
	}
	var b strings.Builder
	used := 0
	state := -1
	for s != "" {
		var g string
		var gw int
		g, s, gw, state = uniseg.FirstGraphemeClusterInString(s, state)
		if used+gw > w-1 {
			break
		}
		b.WriteString(g)
		used += gw
	}
	return b.String() + "…"
}

// header is the line of lane names, each centred on its column.
func (d seqDiagram) header() string {
	c := blank(d.width)
	for i, l := range d.lanes {
		room := d.width
		if len(d.cols) > 1 {
			room = d.width / len(d.cols)
		}
		name := fit(l.Name, room)
		x := d.cols[i] - uniseg.StringWidth(name)/2
		x = max(0, min(x, d.width-uniseg.StringWidth(name)))
		c.put(x, d.width, name)
	}
	return c.String()
}

// rail is a line with only the lanes' vertical lines.
func (d seqDiagram) rail() string { return d.withRails().String() }

func (d seqDiagram) withRails() cells {
	c := blank(d.width)
	for _, x := range d.cols {
		c[x] = "│"
	}
	return c
}

// arrow draws one message.
func (d seqDiagram) arrow(a seqArrow) string {
	c := d.withRails()
	from, ok1 := d.col(a.From)
	to, ok2 := d.col(a.To)
	if !ok1 || !ok2 {
		c.put(0, d.width, fit(a.Label, d.width))
		return c.String()
	}
	if from == to {
		return d.note(c, from, a).String()
	}
	line := "─"
	if a.Dashed || a.Lost {
		line = "╌"
	}
	lo, hi := min(from, to), max(from, to)
	// The shaft runs between the two rails; a lost answer is cut short of
	// its destination.
	start, end := lo+1, hi-1
	cut := -1
	if a.Lost {
		short := max(2, (hi-lo)/5)
		if from < to {
			end -= short
			cut = end
		} else {
			start += short
			cut = start
		}
	}
	for x := start; x <= end; x++ {
		c[x] = line
	}
	switch {
	case a.Lost:
		c[cut] = "✕"
	case from < to:
		c[end] = "▶"
	default:
		c[start] = "◀"
	}
	// The label sits in the middle of the shaft, a space on each side.
	// The interior is start+2 .. end-2, leaving the shaft visible at both ends.
	interior := end - start - 3
	label := fit(a.Label, interior-2)
	if label != "" {
		padded := " " + label + " "
		x := start + 2 + (interior-uniseg.StringWidth(padded))/2
		c.put(x, end-1, padded)
	}
	return c.String()
}

// note writes a label beside a lane: to its right, or to its left when it is
// the last lane.
func (d seqDiagram) note(c cells, x int, a seqArrow) cells {
	label := "⟲ " + a.Label
	last := x == d.cols[len(d.cols)-1]
	if !last {
		c.put(x+2, d.width, fit(label, d.width-x-2))
		return c
	}
	label = fit(label, x-2)
	w := uniseg.StringWidth(label)
	c.put(x-1-w, x-1, label)
	return c
}
