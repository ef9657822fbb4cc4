package headless

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/learn-idempotency/learn/pgtemp"
)

// DownloadReport shows the headless commands (learn demo, learn lab, learn
// serve, learn doctor) how a download of PostgreSQL goes, in plain lines:
// when it starts, what, how big, from where and where it is kept (unless
// the command's log says so already); then at a terminal one line
// rewritten in place as bytes arrive, elsewhere a line at each quarter.
type DownloadReport struct {
	say      func(line string) // writes one line, without its newline
	w        io.Writer         // the terminal, when live
	prefix   string            // of a live line
	live     bool
	announce bool

	mu      sync.Mutex
	quarter int       // quarters reported so far (not live)
	shown   time.Time // the last rewrite (live)
	open    bool      // a live line waits for its newline
}

// NewDownloadReport reports on w: rewritten in place when w is a terminal.
// Every line starts with prefix.
func NewDownloadReport(w io.Writer, prefix string) *DownloadReport {
	return &DownloadReport{say: func(s string) { fmt.Fprintln(w, prefix+s) }, w: w, prefix: prefix, live: isTerminal(w), announce: true}
}

// NewDownloadLines reports through say, a line at each quarter and no
// announcement: for a command whose log says already that a download
// starts (learn serve).
func NewDownloadLines(say func(line string)) *DownloadReport {
	return &DownloadReport{say: say}
}

// Update is pgtemp.Options.OnDownload.
func (r *DownloadReport) Update(p pgtemp.DownloadProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Done == 0 {
		r.quarter = 0
		r.end()
		if r.announce {
			r.say(downloadAnnouncement(p))
		}
		return
	}
	f, known := p.Fraction()
	if r.live {
		if p.Done != p.Total && time.Since(r.shown) < 100*time.Millisecond {
			return
		}
		r.shown = time.Now()
		fmt.Fprintf(r.w, "\r\x1b[K%s%s", r.prefix, downloadedText(p))
		r.open = true
		if p.Done == p.Total {
			r.end()
		}
		return
	}
	if q := int(f * 4); known && q > r.quarter {
		r.quarter = q
		r.say(downloadedText(p))
	}
}

// Finish ends a line left open (a download stopped half way).
func (r *DownloadReport) Finish() {
	r.mu.Lock()
	r.end()
	r.mu.Unlock()
}

func (r *DownloadReport) end() {
	if r.open {
		fmt.Fprintln(r.w)
		r.open = false
	}
}

// downloadAnnouncement is the line that says a download starts.
func downloadAnnouncement(p pgtemp.DownloadProgress) string {
	size := "size not given"
	if p.Total >= 0 {
		size = humanize.Bytes(uint64(p.Total))
	}
	return fmt.Sprintf("downloading %s (%s, once) from %s into %s", p.What, size, p.From, p.To)
}

// downloadedText is how far a download is, e.g. "downloaded 12 MB of 24 MB (50%)".
func downloadedText(p pgtemp.DownloadProgress) string {
	f, ok := p.Fraction()
	if !ok {
		return "downloaded " + humanize.Bytes(uint64(p.Done))
	}
	return fmt.Sprintf("downloaded %s of %s (%.0f%%)", humanize.Bytes(uint64(p.Done)), humanize.Bytes(uint64(p.Total)), f*100)
}
