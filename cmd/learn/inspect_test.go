package main

import (
	"os"
	"testing"

	"github.com/creack/pty"

	"github.com/learn-idempotency/learn/progress"
)

// At a terminal, every command line that opens the app has the first
// frame the supervisor draws: learn lesson and learn interview too, which
// open the app only when standard output is a terminal (the inspected
// tree wrote to a discarding writer, which is no terminal, so they drew
// none and the page waited for the app's own process).
func TestEveryAppCommandLineHasAFirstFrame(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	saved := os.Stdout
	os.Stdout = tty
	defer func() { os.Stdout = saved }()

	for _, tt := range []struct {
		args []string
		page progress.Page
		name string
	}{
		{nil, progress.PageHome, ""},
		{[]string{"lesson"}, progress.PageReader, "idempotency"},
		{[]string{"interview"}, progress.PageReader, "retry-across-instances"},
	} {
		l := inspect(tt.args)
		if !l.fullScreen || l.first == nil || l.first.Page != tt.page || l.first.Name != tt.name {
			t.Errorf("learn %v: full screen %v, first %+v; want page %v %q", tt.args, l.fullScreen, l.first, tt.page, tt.name)
		}
	}

	// Elsewhere than at a terminal, learn lesson prints the page: no app,
	// no frame.
	os.Stdout = saved
	if f, err := os.CreateTemp(t.TempDir(), "out"); err == nil {
		os.Stdout = f
		if l := inspect([]string{"lesson"}); l.first != nil {
			t.Errorf("learn lesson > file: first frame %+v, want none", l.first)
		}
		f.Close()
	}
}
