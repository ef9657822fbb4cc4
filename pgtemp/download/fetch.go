package download

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// errDamaged is wrapped when an archive arrived damaged: shorter than the
// repository said, with another checksum than the one it publishes, or not
// an archive learn can read. Such a download is removed and fetched again.
var errDamaged = errors.New("the download is damaged")

// errStalled is the cause of a request the repository stopped answering.
var errStalled = errors.New("the repository stopped answering")

// checksum is what an archive that arrived whole measured.
type checksum struct {
	algo string // "sha512", "sha256", "sha1"; "" when the repository publishes none
	hex  string
	size int64
}

func (c checksum) String() string {
	if c.algo == "" {
		return "none published"
	}
	return c.algo + ":" + c.hex
}

// checksumKinds are the checksum files a Maven repository may publish next
// to an artifact, best first (Maven Central has .sha1 for every artifact,
// .sha256 and .sha512 for newer ones).
var checksumKinds = []struct {
	ext string
	new func() hash.Hash
}{
	{".sha512", sha512.New},
	{".sha256", sha256.New},
	{".sha1", sha1.New},
}

// fetcher gets files from the repository; every request fails when the
// repository stays silent for idle.
type fetcher struct {
	client *http.Client
	idle   time.Duration
	repo   string
}

func newFetcher(env *way.Env, repo string) *fetcher {
	idle := downloadIdle
	if env.DownloadIdle > 0 {
		idle = env.DownloadIdle
	}
	// Go's default transport's settings (a proxy from the environment,
	// its timeouts), in a transport of the fetcher's own; a default
	// transport that is no *http.Transport (a test's wrapper) is used as
	// it is.
	var tr http.RoundTripper = http.DefaultTransport
	if t, ok := tr.(*http.Transport); ok {
		tr = t.Clone()
	}
	return &fetcher{client: &http.Client{Transport: tr}, idle: idle, repo: repo}
}

// response is an answer whose body is being read; every read that brings
// bytes gives the repository idle more to send the next ones.
type response struct {
	*http.Response
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelCauseFunc
}

func (r *response) Read(p []byte) (int, error) {
	n, err := r.Body.Read(p)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}

func (r *response) Close() {
	r.timer.Stop()
	r.Body.Close()
	r.cancel(nil)
}

// get sends GET u. The error says in one line what went wrong: the
// repository cannot be reached, or stayed silent for f.idle; ctx's own
// error when ctx ended. A status other than 200 is not an error here.
func (f *fetcher) get(ctx context.Context, u string) (*response, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(f.idle, func() { cancel(errStalled) })
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, fmt.Errorf("%s is not a repository URL learn can use (%v): set %s to the base URL of a Maven repository, e.g. %s", f.repo, err, RepositoryEnv, DefaultRepository)
	}
	req.Header.Set("User-Agent", "learn (downloading PostgreSQL binaries)")
	resp, err := f.client.Do(req)
	if err != nil {
		timer.Stop()
		err = f.failure(ctx, rctx, err)
		cancel(nil)
		return nil, err
	}
	return &response{Response: resp, timer: timer, idle: f.idle, cancel: cancel}, nil
}

// failure turns the error of a request (or of reading its body) into one
// line for people; ctx's error when the caller's ctx ended.
func (f *fetcher) failure(ctx, rctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(rctx), errStalled) {
		return fmt.Errorf("%w: %s sent nothing for %s", errStalled, f.repo, f.idle)
	}
	reason := err.Error()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		reason = uerr.Err.Error()
	}
	var oerr *net.OpError
	if errors.As(err, &oerr) {
		reason = oerr.Err.Error()
	}
	var derr *net.DNSError
	if errors.As(err, &derr) {
		reason = "cannot resolve " + derr.Name
	}
	return fmt.Errorf("cannot reach %s (%s): offline?", f.repo, reason)
}

// refused says what a status other than 200 means for the archive at u.
func refused(a archive, u string, resp *http.Response) error {
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		return fmt.Errorf("the repository has no %s (%s at %s)", a, resp.Status, u)
	}
	return fmt.Errorf("the repository refused %s (%s at %s)", a, resp.Status, u)
}

// fetchArchive downloads archive a into a new file .part-* in base and
// returns its path once it is whole: as long as the repository said
// (Content-Length), and with the checksum the repository publishes next to
// it, when it publishes one. It announces the download (what, how big,
// from where, kept where) through opts.Logf before the first byte, and
// reports its progress to opts.OnDownload. On any error, and when ctx ends,
// the file is removed; an archive that arrived damaged gives an error
// wrapping errDamaged.
func fetchArchive(ctx context.Context, env *way.Env, a archive, base, dir string) (path string, sum checksum, err error) {
	if err := checkRepository(a.repo); err != nil {
		return "", sum, err
	}
	f := newFetcher(env, a.repo)
	u := a.url()
	want, kind, err := f.publishedChecksum(ctx, u)
	if err != nil {
		return "", sum, err
	}

	resp, err := f.get(ctx, u)
	if err != nil {
		return "", sum, err
	}
	defer resp.Close()
	if resp.StatusCode != http.StatusOK {
		return "", sum, refused(a, u, resp.Response)
	}
	total := resp.ContentLength
	env.Log("downloading %s (%s) from %s into %s", a, BytesText(total), u, dir)
	if want == nil {
		env.Log("the repository publishes no checksum for it: checking its size only")
	}
	p := way.DownloadProgress{What: a.String(), From: u, To: dir, Total: total}
	env.Progress(p)

	out, err := os.CreateTemp(base, ".part-")
	if err != nil {
		return "", sum, fmt.Errorf("could not write into %s: %w", base, err)
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	var h hash.Hash
	if kind >= 0 {
		h = checksumKinds[kind].new()
	}
	buf := make([]byte, 64<<10)
	for {
		n, rerr := resp.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return "", sum, fmt.Errorf("could not write into %s: %w", base, werr)
			}
			if h != nil {
				h.Write(buf[:n])
			}
			p.Done += int64(n)
			env.Progress(p)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return "", sum, ctx.Err()
			}
			if errors.Is(rerr, io.ErrUnexpectedEOF) {
				return "", sum, fmt.Errorf("%w: %s ended after %s of %s", errDamaged, u, BytesText(p.Done), BytesText(total))
			}
			return "", sum, f.failure(ctx, resp.Request.Context(), rerr)
		}
	}
	if err = out.Close(); err != nil {
		return "", sum, fmt.Errorf("could not write into %s: %w", base, err)
	}
	if total >= 0 && p.Done != total {
		return "", sum, fmt.Errorf("%w: %s sent %d bytes of %d", errDamaged, u, p.Done, total)
	}
	sum = checksum{size: p.Done}
	if h != nil {
		sum.algo = strings.TrimPrefix(checksumKinds[kind].ext, ".")
		got := h.Sum(nil)
		sum.hex = hex.EncodeToString(got)
		if !bytes.Equal(got, want) {
			return "", sum, fmt.Errorf("%w: its %s is %s, the repository publishes %s", errDamaged, sum.algo, sum.hex, hex.EncodeToString(want))
		}
	}
	return out.Name(), sum, nil
}

// publishedChecksum fetches the first checksum file the repository has for
// u (see checksumKinds) and returns the checksum and its index in
// checksumKinds; -1 and no error when it has none. A repository that
// cannot be reached is an error.
func (f *fetcher) publishedChecksum(ctx context.Context, u string) ([]byte, int, error) {
	for i, k := range checksumKinds {
		resp, err := f.get(ctx, u+k.ext)
		if err != nil {
			return nil, -1, err
		}
		body, err := io.ReadAll(io.LimitReader(resp, 4096))
		status := resp.StatusCode
		if err != nil {
			err = f.failure(ctx, resp.Request.Context(), err)
		}
		resp.Close()
		if err != nil {
			return nil, -1, err
		}
		if status != http.StatusOK {
			continue
		}
		// The file holds the hex digest, sometimes followed by the
		// file's name ("<hex>  <name>").
		fields := strings.Fields(string(body))
		if len(fields) == 0 {
			continue
		}
		sum, err := hex.DecodeString(fields[0])
		if err != nil || len(sum) != k.new().Size() {
			continue
		}
		return sum, i, nil
	}
	return nil, -1, nil
}
