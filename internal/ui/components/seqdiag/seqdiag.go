// Package seqdiag draws sequence diagrams as text, one message a line: the
// lanes (participants) as vertical rails, each message an arrow between two
// of them with its label in the middle, a reply dashed, a lost answer cut
// short with a cross. Every line is exactly the diagram's width in cells,
// wide graphemes included. The play screen and the lesson's "Picture it"
// both draw with it.
package seqdiag

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// Lane is one participant column: ID is what arrows name, Name is shown.
type Lane struct{ ID, Name string }

// Arrow is one message, drawn on one line. From == To is a note beside
// that lane.
type Arrow struct {
	From, To string
	Label    string
	Dashed   bool // a reply
	Lost     bool // cut on the way: the answer never arrives
}

// Diagram draws the messages between a set of lanes, each line exactly
// width cells.
type Diagram struct {
	lanes []Lane
	width int
	cols  []int // cell column of each lane's vertical line
}

// New lays out lanes evenly over width cells (at least 8).
func New(lanes []Lane, width int) Diagram {
	d := Diagram{lanes: lanes, width: max(width, 8)}
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

func (d Diagram) col(id string) (int, bool) {
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
	return ansi.Truncate(s, w, "…")
}

// Header is the line of lane names, each centred on its column.
func (d Diagram) Header() string {
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

// Rail is a line with only the lanes' vertical lines.
func (d Diagram) Rail() string { return d.withRails().String() }

func (d Diagram) withRails() cells {
	c := blank(d.width)
	for _, x := range d.cols {
		c[x] = "│"
	}
	return c
}

// Arrow draws one message: an arrow between two lanes, or a note beside
// one.
func (d Diagram) Arrow(a Arrow) string {
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

// note writes a label beside a lane: to its right, up to a space before the
// next lane's lifeline, or, for the last lane, to its left after the
// previous one's. It never draws over a lifeline; what does not fit is cut
// with "…" (the caption carries the whole text).
func (d Diagram) note(c cells, x int, a Arrow) cells {
	label := "↻ " + a.Label
	i := slices.Index(d.cols, x)
	if i < len(d.cols)-1 {
		// Between this lane and the next one's lifeline, a space short of it.
		room := d.cols[i+1] - 1 - (x + 2)
		c.put(x+2, d.cols[i+1]-1, fit(label, room))
		return c
	}
	// The last lane: to its left, after the previous lane's lifeline.
	from := 0
	if i > 0 {
		from = d.cols[i-1] + 2
	}
	label = fit(label, x-1-from)
	w := uniseg.StringWidth(label)
	c.put(x-1-w, x-1, label)
	return c
}
