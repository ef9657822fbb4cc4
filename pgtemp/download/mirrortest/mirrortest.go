// Package mirrortest is a Maven mirror on loopback for the tests of the
// download way (and of pgtemp's Auto and doctor probe, which reach it):
// [Jar] builds an archive in the zonky layout from this machine's
// PostgreSQL, [New] serves it. No machine here reaches Maven Central.
package mirrortest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ulikunitz/xz"
)

// A local Maven mirror for the download way's tests: no machine here
// reaches Maven Central, so the tests serve an archive in the zonky layout
// (a jar holding postgres-<os>-<arch>.txz: bin/, lib/, share/postgresql/)
// built from this machine's PostgreSQL, as .ci/postgres-image.sh builds the
// Docker tests' image, on a loopback HTTP server.
//
// Debian's binaries are not built to move: a server finds its share and
// library directories at the place its build names relative to its own
// program (/usr/lib/postgresql/15/bin → ../../../../share/postgresql/15),
// and falls back to the absolute paths of the build otherwise. So the
// archive keeps that relative layout under lib/ and share/, and bin/ holds
// symbolic links to the programs (PostgreSQL resolves them to find itself),
// where zonky's relocatable builds hold the programs themselves. Either
// way bin/initdb and bin/postgres start a server that uses nothing outside
// the archive but the system's shared libraries.

var (
	tarOnce sync.Once
	tarData []byte
	tarErr  error

	jarOnce, storedOnce sync.Once
	jarData, storedData []byte
	jarErr, storedErr   error
)

// Jar returns the jar built from this machine's PostgreSQL, its .txz
// compressed with xz (LZMA2, preset 1) as zonky's are, once per test
// binary. Reading it costs LZMA decoding, seconds under -race: give it to
// the tests whose subject is that decoding, and [StoredJar] to the others.
// It skips the test when there are no local binaries.
func Jar(t testing.TB) []byte {
	t.Helper()
	tr := archiveTar(t)
	jarOnce.Do(func() {
		var txz []byte
		if txz, jarErr = compressXZ(tr); jarErr == nil {
			jarData, jarErr = wrapJar(txz)
		}
	})
	if jarErr != nil {
		t.Fatalf("building the test archive: %v", jarErr)
	}
	return jarData
}

// StoredJar returns the jar [Jar] returns with its .txz holding the same
// tar in LZMA2's uncompressed chunks ([StoredXZ]): a jar in the zonky
// layout that the download way fetches, checks and extracts exactly as
// the compressed one (xz container, block check, tar), whose reading is a
// copy rather than LZMA decoding. Built once per test binary; it skips
// the test when there are no local binaries.
func StoredJar(t testing.TB) []byte {
	t.Helper()
	tr := archiveTar(t)
	storedOnce.Do(func() { storedData, storedErr = wrapJar(StoredXZ(tr)) })
	if storedErr != nil {
		t.Fatalf("building the stored test archive: %v", storedErr)
	}
	return storedData
}

// archiveTar is the tar of this machine's PostgreSQL in the zonky layout,
// built once per test binary.
func archiveTar(t testing.TB) []byte {
	t.Helper()
	bindir := serverBinaries(t)
	tarOnce.Do(func() { tarData, tarErr = buildZonkyTar(bindir) })
	if tarErr != nil {
		t.Fatalf("building the test archive: %v", tarErr)
	}
	return tarData
}

// serverBinaries is the newest directory of PostgreSQL server binaries
// with a pg_config (Debian's /usr/lib/postgresql/*/bin, or the PATH's), or
// skips the test.
func serverBinaries(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if p, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(p, "--bindir").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_config")); err == nil {
			if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
				return dirs[i]
			}
		}
	}
	t.Skip("no local PostgreSQL server binaries with pg_config to build the test archive from")
	return ""
}

// buildZonkyTar builds the tar of the binaries in bindir, their libraries
// and share directory (pg_config says where), without the LLVM JIT and
// its bitcode (PostgreSQL runs without them).
func buildZonkyTar(bindir string) ([]byte, error) {
	out, err := exec.Command(filepath.Join(bindir, "pg_config"), "--bindir", "--sharedir", "--pkglibdir").Output()
	if err != nil {
		return nil, fmt.Errorf("pg_config: %v", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != 3 {
		return nil, fmt.Errorf("pg_config printed %q", out)
	}
	bindir, sharedir, pkglibdir := dirs[0], dirs[1], dirs[2]
	// The prefix the three share, and each one's place under it.
	prefix := "/"
	for _, p := range strings.Split(strings.Trim(bindir, "/"), "/") {
		next := path.Join(prefix, p)
		if !strings.HasPrefix(sharedir+"/", next+"/") || !strings.HasPrefix(pkglibdir+"/", next+"/") {
			break
		}
		prefix = next
	}
	rel := func(d string) string { return strings.TrimPrefix(strings.TrimPrefix(d, prefix), "/") }

	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	addFile := func(name, src string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	}
	for _, p := range []string{"initdb", "postgres", "pg_ctl"} {
		if err := addFile(path.Join(rel(bindir), p), filepath.Join(bindir, p)); err != nil {
			return nil, err
		}
		if rel(bindir) != "bin" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + p, Linkname: path.Join("..", rel(bindir), p), Mode: 0o777}); err != nil {
				return nil, err
			}
		}
	}
	libs, _ := filepath.Glob(filepath.Join(pkglibdir, "*.so"))
	for _, so := range libs {
		if strings.HasPrefix(filepath.Base(so), "llvmjit") {
			continue
		}
		if err := addFile(path.Join(rel(pkglibdir), filepath.Base(so)), so); err != nil {
			return nil, err
		}
	}
	err = filepath.WalkDir(sharedir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		r, _ := filepath.Rel(sharedir, p)
		return addFile(path.Join(rel(sharedir), filepath.ToSlash(r)), p)
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}

	return tarBuf.Bytes(), nil
}

// compressXZ compresses data with xz at preset 1, with the xz program when
// there is one (ZZGO unset), else with github.com/ulikunitz/xz.
func compressXZ(data []byte) ([]byte, error) {
	var txz bytes.Buffer
	if p, err := exec.LookPath("xz"); err == nil && os.Getenv("ZZGO") == "" {
		cmd := exec.Command(p, "-T0", "-1", "-c")
		cmd.Stdin = bytes.NewReader(data)
		cmd.Stdout = &txz
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		return txz.Bytes(), nil
	}
	xw, err := xz.NewWriter(&txz)
	if err != nil {
		return nil, err
	}
	if _, err := xw.Write(data); err != nil {
		return nil, err
	}
	if err := xw.Close(); err != nil {
		return nil, err
	}
	return txz.Bytes(), nil
}

// wrapJar is the jar holding txz as postgres-<os>-<arch>.txz, stored.
func wrapJar(txz []byte) ([]byte, error) {
	var jar bytes.Buffer
	zw := zip.NewWriter(&jar)
	mf, _ := zw.Create("META-INF/MANIFEST.MF")
	io.WriteString(mf, "Manifest-Version: 1.0\r\n\r\n")
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "postgres-" + runtime.GOOS + "-" + runtime.GOARCH + ".txz", Method: zip.Store})
	if err != nil {
		return nil, err
	}
	w.Write(txz)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return jar.Bytes(), nil
}

// Mirror is a Maven repository on loopback serving one jar (and its
// .sha256; no .sha512) at jarPath. Its hooks change what a request of the
// jar gets; it counts every request.
type Mirror struct {
	*httptest.Server
	jarPath string
	jar     []byte
	Reqs    atomic.Int64 // every request
	Jars    atomic.Int64 // requests of the jar

	mu sync.Mutex
	// serveJar, when not nil, answers the n-th request of the jar (from 1)
	// instead of serving it whole; it returns false to serve it whole.
	serveJar func(n int64, w http.ResponseWriter, r *http.Request) bool
}

// New is a mirror serving jar at jarPath (download.ArchivePath), closed
// when the test ends.
func New(t testing.TB, jar []byte, jarPath string) *Mirror {
	t.Helper()
	return NewStub(t, jar, jarPath, nil)
}

// NewStub is a mirror whose every request h answers, when h is not nil.
func NewStub(t testing.TB, jar []byte, jarPath string, h http.HandlerFunc) *Mirror {
	t.Helper()
	m := &Mirror{jar: jar, jarPath: jarPath}
	handle := m.handle
	if h != nil {
		handle = func(w http.ResponseWriter, r *http.Request) {
			m.Reqs.Add(1)
			h(w, r)
		}
	}
	m.Server = httptest.NewServer(http.HandlerFunc(handle))
	t.Cleanup(m.Close)
	return m
}

func (m *Mirror) handle(w http.ResponseWriter, r *http.Request) {
	m.Reqs.Add(1)
	jarPath := m.jarPath
	switch r.URL.Path {
	case jarPath:
		n := m.Jars.Add(1)
		m.mu.Lock()
		hook := m.serveJar
		m.mu.Unlock()
		if hook != nil && hook(n, w, r) {
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(m.jar)))
		w.Write(m.jar)
	case jarPath + ".sha256":
		sum := sha256.Sum256(m.jar)
		io.WriteString(w, hex.EncodeToString(sum[:]))
	default:
		http.NotFound(w, r)
	}
}

// OnJar sets the hook that answers requests of the jar.
func (m *Mirror) OnJar(f func(n int64, w http.ResponseWriter, r *http.Request) bool) {
	m.mu.Lock()
	m.serveJar = f
	m.mu.Unlock()
}

// CutShort sends the jar's full Content-Length but only half its bytes,
// then drops the connection.
func CutShort(jar []byte) func(int64, http.ResponseWriter, *http.Request) bool {
	return func(_ int64, w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Length", fmt.Sprint(len(jar)))
		w.Write(jar[:len(jar)/2])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	}
}

// ClosedURL is an http URL on loopback where nothing listens.
func ClosedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// Jar is the jar the mirror serves.
func (m *Mirror) Jar() []byte { return m.jar }
