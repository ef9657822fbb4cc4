package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// learn with a home directory that does not exist (HOME=/nonexistent, as
// daemons and containers run it, as root too) makes none: a demo runs (its
// cluster runs initdb, with no template to keep) and says nothing of a
// cache; progress says that it is not kept and what to set; afterwards the
// home still does not exist.
func TestAHomeThatDoesNotExistIsNotMade(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	nohome := filepath.Join(t.TempDir(), "nonexistent")
	env := []string{"HOME=" + nohome, "PATH=" + os.Getenv("PATH"), "DATABASE_URL="}
	if u := os.Getenv("LEARN_TEST_DATABASE"); u != "" {
		env = append(env, "DATABASE_URL="+u)
	}
	for _, args := range [][]string{{"demo", "lost-answer"}, {"progress"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("learn %s: %v\n%s", strings.Join(args, " "), err, out)
		if args[0] == "demo" && err != nil {
			t.Errorf("learn demo with no home: %v", err)
		}
		if args[0] == "progress" && !strings.Contains(string(out), nohome+" does not exist") {
			t.Errorf("learn progress does not say the home does not exist:\n%s", out)
		}
		if _, err := os.Stat(nohome); !os.IsNotExist(err) {
			t.Fatalf("after learn %s the home %s exists (%v)", strings.Join(args, " "), nohome, err)
		}
	}
}
