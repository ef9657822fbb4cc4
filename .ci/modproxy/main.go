// Command modproxy serves one commit of the Go module in a git repository
// as a file-based module proxy: it writes DIR/<module>/@v/list and the
// version's .info, .mod and .zip, the layout GOPROXY=file://DIR reads, and
// prints the version, a pseudo-version named after the commit
// (v0.0.0-yyyymmddhhmmss-abcdefabcdef). CI uses it to run `go install
// MODULE/cmd/learn@VERSION` on the checkout, as a person would on a
// release, with no network but the module proxy the machine has.
//
//	go run . -repo CLONE -rev COMMIT -out DIR
//
// The zip is made as the go command makes one from version control
// (golang.org/x/mod/zip.CreateFromVCS: the files `git archive` gives at the
// commit), so CLONE must be a repository whose .git is a directory, not a
// linked work tree.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	repo := flag.String("repo", ".", "the git repository (its .git a directory)")
	rev := flag.String("rev", "HEAD", "the commit to serve")
	out := flag.String("out", "", "the proxy's directory (made if missing)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -repo CLONE -rev COMMIT -out DIR")
		os.Exit(2)
	}
	v, err := serve(*repo, *rev, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	fmt.Println(v.Path, v.Version)
}

// serve writes the module at rev in repo into the proxy at out and returns
// its path and version.
func serve(repo, rev, out string) (module.Version, error) {
	commit, err := git(repo, "show", "-s", "--format=%H %ct", rev+"^{commit}")
	if err != nil {
		return module.Version{}, err
	}
	hash, unix, _ := strings.Cut(commit, " ")
	secs, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return module.Version{}, fmt.Errorf("commit time %q: %w", unix, err)
	}
	at := time.Unix(secs, 0).UTC()
	gomod, err := git(repo, "show", hash+":go.mod")
	if err != nil {
		return module.Version{}, err
	}
	path := modfile.ModulePath([]byte(gomod))
	if path == "" {
		return module.Version{}, errors.New("go.mod at " + rev + " names no module")
	}
	_, pathMajor, ok := module.SplitPathVersion(path)
	if !ok {
		return module.Version{}, fmt.Errorf("module path %q is not valid", path)
	}
	v := module.Version{Path: path, Version: module.PseudoVersion(module.PathMajorPrefix(pathMajor), "", at, hash[:12])}

	escaped, err := module.EscapePath(path)
	if err != nil {
		return v, err
	}
	dir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v, err
	}
	info, err := json.Marshal(struct{ Version, Time string }{v.Version, at.Format(time.RFC3339)})
	if err != nil {
		return v, err
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromVCS(&zip, v, repo, hash, ""); err != nil {
		return v, err
	}
	for name, data := range map[string][]byte{
		"list":              []byte(v.Version + "\n"),
		v.Version + ".info": info,
		v.Version + ".mod":  []byte(gomod),
		v.Version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return v, err
		}
	}
	return v, nil
}

// git runs git in repo and returns its output without the final newline.
func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}
