// Package local is the local way: PostgreSQL server binaries already on
// this machine, run as a private cluster (package cluster) in a 0700
// temporary directory, Unix socket only, as an unprivileged user when learn
// runs as root, removed on Close.
//
//   - [Way] implements way.Way: Start finds the binaries ([Find]) and
//     starts a cluster with them; Inspect says what was found and whether
//     the template is warm.
//   - find.go: where learn looks ([Finder]: pg_config --bindir, PATH,
//     /usr/lib/postgresql/*/bin, Homebrew, Postgres.app), newest first,
//     and what counts as server binaries ([ErrNoBinaries] when none).
package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// Way is the local way. Its zero value asks this machine.
type Way struct {
	// Finder, when not nil, replaces the search of this machine (tests).
	Finder *Finder
}

var _ way.Way = Way{}

func (w Way) finder(ctx context.Context, env *way.Env) Finder {
	if w.Finder != nil {
		return *w.Finder
	}
	return SystemFinder(ctx, env.CacheDir)
}

// Start finds the binaries on this machine and starts a cluster with them
// (cluster.Start). Without binaries its error wraps ErrNoBinaries.
func (w Way) Start(ctx context.Context, env *way.Env) (*way.Instance, error) {
	env.Log("looking for PostgreSQL server binaries…")
	bin, err := Find(ctx, w.finder(ctx, env))
	if err != nil {
		return nil, err
	}
	env.Log("using PostgreSQL %s in %s", bin.Version, bin.Dir)
	return cluster.Start(ctx, env, cluster.Spec{Bin: bin,
		Label: fmt.Sprintf("local PostgreSQL %s (%s)", bin.Version, bin.Dir)})
}

// Inspect says which binaries the way would use, as which user, and
// whether a start would copy the template or run initdb.
func (w Way) Inspect(ctx context.Context, env *way.Env) (in way.Inspection) {
	bin, err := Find(ctx, w.finder(ctx, env))
	if err != nil {
		in.Err = err
		in.Missing = errors.Is(err, ErrNoBinaries)
		return in
	}
	in.Details = append(in.Details, fmt.Sprintf("PostgreSQL %s in %s", bin.Version, bin.Dir))
	run, err := runas.Current()
	if err != nil {
		in.Err = err
		return in
	}
	in.Available = true
	if run.Cred != nil {
		in.Details = append(in.Details, fmt.Sprintf("learn runs as root, so the cluster runs as %s", run))
	}
	switch tmpl := template.Path(env.CacheDir, bin.Major, run.UID); {
	case tmpl == "":
		in.Details = append(in.Details, "no user cache directory: every start runs initdb")
	case template.Usable(tmpl, bin.Major):
		in.Details = append(in.Details, fmt.Sprintf("cluster template %s: warm (a start copies it)", tmpl))
	default:
		if why := template.DirProblem(filepath.Dir(tmpl)); why != "" {
			in.Details = append(in.Details, fmt.Sprintf("cluster template %s: cold, and learn cannot save one there (%s): every start runs initdb", tmpl, why))
		} else {
			in.Details = append(in.Details, fmt.Sprintf("cluster template %s: cold (the next start runs initdb and tries to save it there)", tmpl))
		}
	}
	return in
}
