package dbstatus

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

var st = common.NewStyles(true)

type source struct {
	line string
	d    *pgtemp.DownloadProgress
}

func (s source) Progress() string { return s.line }
func (s source) Download() (pgtemp.DownloadProgress, bool) {
	if s.d == nil {
		return pgtemp.DownloadProgress{}, false
	}
	return *s.d, true
}

// Without a download the line is the progress line, as the screens drew it
// before.
func TestLineWithoutADownload(t *testing.T) {
	got := Line(st, source{line: "initdb…"}, " PostgreSQL: ", 40)
	if want := st.Subtle.Render(common.Truncate(" PostgreSQL: initdb…", 40)); got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

// During a download: what, a bar with the percentage, the bytes in; the
// line never takes more than its width, and keeps the percentage as long
// as anything fits.
func TestLineDuringADownload(t *testing.T) {
	d := &pgtemp.DownloadProgress{What: "PostgreSQL 17.5.0 for linux/amd64", Done: 12_000_000, Total: 24_000_000}
	tests := []struct {
		width int
		want  []string
	}{
		{120, []string{"PostgreSQL: downloading PostgreSQL 17.5.0 for linux/amd64 ", " 50%", " 12 MB/24 MB"}},
		{80, []string{"downloading PostgreSQL 17.5.0 for linux/amd64 ", " 50%"}},
		{40, []string{"PostgreSQL: downloading ", " 50%"}},
		{20, []string{"50%"}},
	}
	for _, tt := range tests {
		got := ansi.Strip(Line(st, source{d: d}, " PostgreSQL: ", tt.width))
		if w := ansi.StringWidth(got); w > tt.width {
			t.Errorf("width %d: %d cells: %q", tt.width, w, got)
		}
		for _, want := range tt.want {
			if !strings.Contains(got, want) {
				t.Errorf("width %d: %q lacks %q", tt.width, got, want)
			}
		}
		t.Logf("%3d: %s", tt.width, got)
	}
	for w := 1; w <= 130; w++ {
		if got := ansi.StringWidth(Line(st, source{d: d}, " PostgreSQL: ", w)); got > w {
			t.Errorf("width %d: %d cells", w, got)
		}
	}
	// The bar grows with the bytes in.
	d0 := *d
	d0.Done = 0
	empty := strings.Count(ansi.Strip(Line(st, source{d: &d0}, "", 80)), "█")
	half := strings.Count(ansi.Strip(Line(st, source{d: d}, "", 80)), "█")
	if empty != 0 || half == 0 {
		t.Errorf("filled cells at 0%%: %d, at 50%%: %d", empty, half)
	}
}

// A download of unknown size shows the bytes in, without a bar.
func TestLineUnknownSize(t *testing.T) {
	got := ansi.Strip(Line(st, source{d: &pgtemp.DownloadProgress{What: "PostgreSQL", Done: 3_000_000, Total: -1}}, " ", 60))
	if got != " downloading PostgreSQL: 3.0 MB" {
		t.Errorf("Line = %q", got)
	}
}

// Block wraps the progress line, never cutting it, and draws the bar during
// a download.
func TestBlock(t *testing.T) {
	long := "looking for PostgreSQL server binaries in PATH, pg_config --bindir and the usual directories"
	got := ansi.Strip(Block(st, source{line: long}, long, 40))
	if strings.Join(strings.Fields(got), " ") != long+"…" {
		t.Errorf("Block cut the line:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
	d := &pgtemp.DownloadProgress{What: "PostgreSQL 17.5.0 for linux/amd64", Done: 6, Total: 24}
	if got := ansi.Strip(Block(st, source{d: d}, "ignored", 80)); !strings.Contains(got, "downloading PostgreSQL 17.5.0") || !strings.Contains(got, " 25%") {
		t.Errorf("Block during a download = %q", got)
	}
}
