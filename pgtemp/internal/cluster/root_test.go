//go:build linux

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
)

// asRootWithClusterUser skips unless learn's tests run as root with a user
// to run the cluster as, and returns that runner.
func asRootWithClusterUser(t *testing.T) runas.Runner {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the hand-over to the cluster user only happens as root")
	}
	run, err := runas.Current()
	if err != nil {
		t.Skip(err)
	}
	return run
}

// The cluster user owns the cluster directory after the hand-over and may
// rename it and put links anywhere in it. Whatever it plants, learn as root
// writes its owner file, removes the data directory and reads the data
// directory for the template only inside the directory it made: a victim
// directory of root's the links point at stays untouched, and no byte of a
// root-only file reaches the template.
func TestRootNeverFollowsLinksPlantedInTheClusterDir(t *testing.T) {
	run := asRootWithClusterUser(t)
	parent, err := os.MkdirTemp("", "pgtemp-links-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(parent, 0o755)
	t.Cleanup(func() { os.RemoveAll(parent) })
	victim := t.TempDir() // root's, 0700
	secret := filepath.Join(victim, "secret")
	os.WriteFile(secret, []byte("root-only secret"), 0o600)
	os.Mkdir(filepath.Join(victim, "data"), 0o700)
	os.WriteFile(filepath.Join(victim, "data", "keep"), []byte("keep"), 0o600)

	dir, err := clusterdir.Make(parent, run)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, run: run}
	if c.root, err = os.OpenRoot(dir); err != nil {
		t.Fatal(err)
	}
	defer c.root.Close()
	os.MkdirAll(filepath.Join(dir, "data", "global"), 0o700)
	os.WriteFile(filepath.Join(dir, "data", "PG_VERSION"), []byte("15\n"), 0o600)
	if err := c.handOver(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dir); fi == nil || fileOwner(fi) != run.UID {
		t.Fatalf("%s was not handed over to %s", dir, run)
	}

	// What the cluster user may do to its own directory: a file swapped
	// for a link to root's secret, and the whole directory moved away and
	// replaced by a link to root's victim directory.
	pgVersion := filepath.Join(dir, "data", "PG_VERSION")
	os.Remove(pgVersion)
	os.Symlink(secret, pgVersion)
	os.Symlink(victim, filepath.Join(dir, "data", "global", "escape"))
	tmpl := filepath.Join(t.TempDir(), "tmpl")
	data, err := c.root.OpenRoot("data")
	if err != nil {
		t.Fatal(err)
	}
	err = template.Save(context.Background(), data, tmpl, false)
	data.Close()
	t.Logf("template.Save: %v", err)
	filepath.WalkDir(tmpl, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if raw, _ := os.ReadFile(path); strings.Contains(string(raw), "secret") {
				t.Errorf("root copied the secret into the template as %s", path)
			}
		}
		return nil
	})

	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(moved) })
	if err := os.Symlink(victim, dir); err != nil {
		t.Fatal(err)
	}

	if err := owner.WriteIn(c.root, 4242); err != nil {
		t.Errorf("owner.WriteIn: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(victim, owner.File)); err == nil {
		t.Errorf("root wrote its owner file into %s, where the link led", victim)
	}
	if raw, err := os.ReadFile(filepath.Join(moved, owner.File)); err != nil || !strings.Contains(string(raw), "postmaster_pid=4242") {
		t.Errorf("the owner file did not land in the directory learn made: %q, %v", raw, err)
	}

	if err := c.root.RemoveAll("data"); err != nil {
		t.Errorf("RemoveAll(data): %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "data", "keep")); err != nil {
		t.Errorf("root removed the victim's data through the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(moved, "data")); err == nil {
		t.Errorf("the cluster's own data directory was not removed")
	}
	if err := clusterdir.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("removing the cluster directory removed what its link pointed at: %v", err)
	}
}

func fileOwner(fi os.FileInfo) int {
	uid, _ := owner.FileUID(fi)
	return uid
}
