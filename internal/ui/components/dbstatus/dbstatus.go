// Package dbstatus draws the line that tells where the start of PostgreSQL
// stands, for the home screen and the play screen: the start's newest
// progress line, and during a first download of PostgreSQL a progress bar
// (bubbles progress) with the share of the bytes in.
package dbstatus

import (
	"fmt"

	"charm.land/bubbles/v2/progress"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

// Source is what the line reads: a *live.Postgres.
type Source interface {
	Progress() string
	Download() (pgtemp.DownloadProgress, bool)
}

// The bar's width: at most maxBar cells (the percentage included), and
// no bar when fewer than minBar fit.
const (
	minBar = 12
	maxBar = 40
)

// Block is the play screen's variant: progress (the start's line, or what
// the screen does next) wrapped to width, never cut; during a download,
// the same bar as Line.
func Block(st *common.Styles, db Source, progress string, width int) string {
	if d, ok := db.Download(); ok {
		return Line(st, downloading(d), "", width)
	}
	return st.Subtle.Render(common.Hang("", common.Ellipsis(progress), width))
}

// downloading is a Source that is only a download.
type downloading pgtemp.DownloadProgress

func (downloading) Progress() string { return "" }
func (d downloading) Download() (pgtemp.DownloadProgress, bool) {
	return pgtemp.DownloadProgress(d), true
}

// Line is prefix followed by the start's newest progress line, in at most
// width cells. While PostgreSQL is downloaded it is prefix, "downloading"
// and what, a progress bar with the percentage, and the bytes in of the
// size; what does not fit goes first (the sizes, then what, then the bar,
// then the prefix), the percentage last.
// A download of unknown size shows the bytes in, without a bar.
func Line(st *common.Styles, db Source, prefix string, width int) string {
	d, ok := db.Download()
	f, known := d.Fraction()
	if !ok {
		return st.Subtle.Render(common.Truncate(prefix+common.Ellipsis(db.Progress()), width))
	}
	if !known {
		return st.Subtle.Render(common.Truncate(fmt.Sprintf("%sdownloading %s: %s", prefix, d.What, humanize.Bytes(uint64(d.Done))), width))
	}
	sizes := fmt.Sprintf(" %s/%s", humanize.Bytes(uint64(d.Done)), humanize.Bytes(uint64(d.Total)))
	for _, try := range []struct{ text, sizes string }{
		{prefix + "downloading " + d.What + " ", sizes},
		{prefix + "downloading " + d.What + " ", ""},
		{prefix + "downloading ", ""},
	} {
		bar := width - ansi.StringWidth(try.text) - ansi.StringWidth(try.sizes)
		if bar < minBar {
			continue
		}
		pb := progress.New(progress.WithWidth(min(bar, maxBar)), progress.WithColors(st.Accent.GetForeground()),
			progress.WithFillCharacters('█', '░')) // full cells: the share reads without colour too
		return st.Subtle.Render(try.text) + pb.ViewAs(f) + st.Subtle.Render(try.sizes)
	}
	short := fmt.Sprintf("downloading %.0f%%", f*100)
	if ansi.StringWidth(prefix+short) <= width {
		short = prefix + short
	}
	return st.Subtle.Render(common.Truncate(short, width))
}
