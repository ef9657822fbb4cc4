package headless

import (
	"bytes"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
)

// The headless commands' download lines: the announcement, then one line
// at each quarter (not a terminal).
func TestDownloadReportLines(t *testing.T) {
	var b bytes.Buffer
	r := NewDownloadReport(&b, "learn: ")
	p := pgtemp.DownloadProgress{What: "PostgreSQL 17.5.0 for linux/amd64", From: "https://mirror/x.jar", To: "/c/learn/postgres/linux-amd64-17.5.0", Total: 4_000_000}
	for _, done := range []int64{0, 500_000, 1_000_000, 1_500_000, 2_100_000, 4_000_000} {
		p.Done = done
		r.Update(p)
	}
	r.Finish()
	want := "learn: downloading PostgreSQL 17.5.0 for linux/amd64 (4.0 MB, once) from https://mirror/x.jar into /c/learn/postgres/linux-amd64-17.5.0\n" +
		"learn: downloaded 1.0 MB of 4.0 MB (25%)\n" +
		"learn: downloaded 2.1 MB of 4.0 MB (52%)\n" +
		"learn: downloaded 4.0 MB of 4.0 MB (100%)\n"
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}
}
