//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/local"
)

func TestProbeURL(t *testing.T) {
	s := needShared(t)
	ctx := context.Background()

	w := Probe(ctx, URL, Options{DatabaseURL: s.ConnString()}, time.Minute)
	if !w.Available || w.Missing || !w.Works || w.Err != nil || w.ReadyIn <= 0 || len(w.Details) == 0 {
		t.Errorf("Probe(URL, the shared server) = %+v", w)
	}

	w = Probe(ctx, URL, Options{}, time.Minute)
	if w.Available || !w.Missing || w.Works || w.Err == nil || w.Err.Error() != "not set" {
		t.Errorf("Probe(URL, none) = %+v", w)
	}

	w = Probe(ctx, URL, Options{DatabaseURL: "postgres://learn:s3cr3t-pw@127.0.0.1:1/nowhere"}, time.Minute)
	if !w.Available || w.Missing || w.Works || w.Err == nil || !strings.Contains(w.Err.Error(), "127.0.0.1:1") {
		t.Errorf("Probe(URL, unreachable) = %+v", w)
	}
	for _, line := range append(w.Details, w.Err.Error()) {
		if strings.Contains(line, "s3cr3t-pw") {
			t.Errorf("the password shows: %q", line)
		}
	}
}

func TestProbeLocalColdThenWarm(t *testing.T) {
	t.Parallel()
	needLocal(t)
	opts := isolated(t, t.TempDir())
	w := Probe(context.Background(), Local, opts, time.Minute)
	if !w.Works || w.Missing || !w.Cold || !strings.Contains(strings.Join(w.Details, "\n"), "cold") {
		t.Fatalf("first Probe(Local) = %+v", w)
	}
	w = Probe(context.Background(), Local, opts, time.Minute)
	if !w.Works || w.Cold || !strings.Contains(strings.Join(w.Details, "\n"), "warm") {
		t.Fatalf("second Probe(Local) = %+v", w)
	}
	t.Logf("%s: %s, ready in %s", w.Title, strings.Join(w.Details, "; "), w.ReadyIn)
	if left, _ := os.ReadDir(opts.tmpParent); len(left) != 0 {
		t.Errorf("the probe left %d entries in %s", len(left), opts.tmpParent)
	}
}

func TestProbeLocalWithoutBinaries(t *testing.T) {
	nothing := &local.Finder{
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	w := Probe(context.Background(), Local, Options{finder: nothing}, time.Minute)
	if w.Available || !w.Missing || w.Works || !errors.Is(w.Err, local.ErrNoBinaries) {
		t.Errorf("Probe(Local) without binaries = %+v", w)
	}
}

func TestProbeDocker(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	w := Probe(context.Background(), Docker, Options{Logf: t.Logf}, 3*time.Minute)
	if !w.Available || !w.Works || w.Err != nil {
		t.Fatalf("Probe(Docker) = %+v", w)
	}
	details := strings.Join(w.Details, "\n")
	for _, want := range []string{d.host, DockerImage(), "removes its containers"} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
	if left := ours(t, d.cli, ourPIDLabel()); len(left) != 0 {
		t.Errorf("the probe left %d containers", len(left))
	}
}

func TestProbeDockerWithoutDaemon(t *testing.T) {
	noDaemon(t)
	w := Probe(context.Background(), Docker, Options{}, time.Minute)
	if w.Available || !w.Missing || w.Works || !errors.Is(w.Err, ErrNoDocker) {
		t.Errorf("Probe(Docker) without a daemon = %+v", w)
	}
	if _, err := ReapDocker(context.Background(), nil); !errors.Is(err, ErrNoDocker) {
		t.Errorf("ReapDocker without a daemon = %v", err)
	}
}
