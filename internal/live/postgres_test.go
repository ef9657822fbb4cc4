package live

import (
	"context"
	"errors"
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

// LaunchAfter starts nothing until its channel closes, and Close before
// that gives the start up without ever starting it.
func TestLaunchAfterWaitsAndCloseGivesUp(t *testing.T) {
	after := make(chan struct{})
	// URL mode on the test server: a start that would succeed at once.
	p := LaunchAfter(pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}, after)
	if ready, _, err := p.Status(); ready || err != nil {
		t.Fatalf("before the channel closed: ready %v, err %v; want the start still waiting", ready, err)
	}
	select {
	case <-p.Done():
		t.Fatal("the start finished before the channel closed")
	default:
	}
	close(after)
	if _, err := p.Wait(t.Context()); err != nil {
		t.Fatalf("after the channel closed: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	never := LaunchAfter(pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}, make(chan struct{}))
	_ = never.Close()
	<-never.Done()
	if _, _, err := never.Status(); !errors.Is(err, context.Canceled) {
		t.Errorf("closed before its start: err %v, want context.Canceled", err)
	}
}
