package live

import (
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
)

// A download shows from its first progress report until the start's next
// line (extracting it): the screens draw a bar only meanwhile.
func TestDownloadProgressLastsUntilTheNextLine(t *testing.T) {
	p := &Postgres{}
	p.logf("downloading %s", "PostgreSQL 17.5.0 for linux/amd64 (24 MB)")
	if _, ok := p.Download(); ok {
		t.Fatalf("a download shows before its first bytes are reported")
	}
	for _, done := range []int64{0, 6, 12} {
		p.onDownload(pgtemp.DownloadProgress{What: "PostgreSQL 17.5.0 for linux/amd64", Done: done, Total: 24})
		d, ok := p.Download()
		f, known := d.Fraction()
		if !ok || !known || f != float64(done)/24 {
			t.Errorf("after %d of 24 bytes: Download = %+v, %v (fraction %v, %v)", done, d, ok, f, known)
		}
	}
	if p.Progress() != "downloading PostgreSQL 17.5.0 for linux/amd64 (24 MB)" {
		t.Errorf("Progress = %q", p.Progress())
	}
	p.logf("extracting it")
	if d, ok := p.Download(); ok {
		t.Errorf("the download still shows after the next line: %+v", d)
	}
}
