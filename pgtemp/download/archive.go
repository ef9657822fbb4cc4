package download

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// manifest is what learn extracted from one archive, written last into its
// directory as .learn-archive.json: a directory without it, or whose files
// differ from it, is not whole and is downloaded again.
type manifest struct {
	URL      string      `json:"url"`
	Archive  string      `json:"archive"`
	Size     int64       `json:"archive_size"`
	Checksum string      `json:"archive_checksum"`
	Files    []entryFile `json:"files"`
}

// entryFile is one regular file (with its size) or symbolic link (with
// its target) of an extracted archive.
type entryFile struct {
	Path string `json:"path"`
	Size int64  `json:"size,omitempty"`
	Link string `json:"link,omitempty"`
}

// verifyArchiveDir checks dir against its manifest: every file there, a
// regular file of the listed size, every link with its target. It costs a
// stat a file, about a millisecond for a whole archive. The error wraps
// os.ErrNotExist when there is no such directory; the manifest is nil when
// it could not be read.
func verifyArchiveDir(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, archiveManifest))
	if err != nil {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, serr
		}
		return nil, errors.New("its extraction never finished (no " + archiveManifest + ")")
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("its %s does not parse: %v", archiveManifest, err)
	}
	if len(m.Files) == 0 {
		return &m, fmt.Errorf("its %s lists no files", archiveManifest)
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return &m, fmt.Errorf("%s is missing", f.Path)
		case f.Link != "":
			if t, err := os.Readlink(p); err != nil || t != f.Link {
				return &m, fmt.Errorf("%s is not the link to %s it was", f.Path, f.Link)
			}
		case !fi.Mode().IsRegular():
			return &m, fmt.Errorf("%s is not a regular file", f.Path)
		case fi.Size() != f.Size:
			return &m, fmt.Errorf("%s has %d bytes instead of %d", f.Path, fi.Size(), f.Size)
		}
	}
	return &m, nil
}

// extractArchive unpacks the jar at jar (a zip holding one .txz: a tar
// archive compressed with xz) into dir, recording every file in m. It
// extracts into a sibling directory .extract-* and renames it into place
// once complete, with m written last, so dir is whole or absent. Entries
// that would land outside dir (absolute paths, "..", links pointing out)
// make the archive damaged, as does one without bin/initdb and
// bin/postgres. When ctx ends, it stops and removes what it wrote.
func extractArchive(ctx context.Context, jar, dir string, m manifest) (err error) {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return fmt.Errorf("%w: it is not a zip archive (%v)", errDamaged, err)
	}
	defer zr.Close()
	var txz *zip.File
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".txz") && !f.FileInfo().IsDir() {
			txz = f
			break
		}
	}
	if txz == nil {
		return fmt.Errorf("%w: it holds no .txz archive of PostgreSQL", errDamaged)
	}
	rc, err := txz.Open()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errDamaged, txz.Name, err)
	}
	defer rc.Close()
	xr, err := xz.NewReader(bufio.NewReaderSize(damagedReader{rc}, 256<<10))
	if err != nil {
		return fmt.Errorf("%w: %s is not xz-compressed (%v)", errDamaged, txz.Name, err)
	}

	staging, err := os.MkdirTemp(filepath.Dir(dir), ".extract-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(staging)
		}
	}()
	files, err := untar(ctx, tar.NewReader(damagedReader{xr}), staging)
	if err != nil {
		return err
	}
	for _, need := range []string{"bin/initdb", "bin/postgres"} {
		if _, err := os.Stat(filepath.Join(staging, need)); err != nil {
			return fmt.Errorf("%w: it holds no %s: not an archive of PostgreSQL's server", errDamaged, need)
		}
	}
	m.Files = files
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staging, archiveManifest), b, 0o644); err != nil {
		return err
	}
	// MkdirTemp made it 0700; the cluster user may need to enter it.
	if err := os.Chmod(staging, 0o755); err != nil {
		return err
	}
	return os.Rename(staging, dir)
}

// untar writes the entries of tr under root and lists them.
func untar(ctx context.Context, tr *tar.Reader, root string) ([]entryFile, error) {
	var files []entryFile
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: its .txz is cut short or corrupt (%v)", errDamaged, err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("%w: it holds %q, outside its directory", errDamaged, h.Name)
		}
		target := filepath.Join(root, filepath.FromSlash(name))
		if h.Typeflag != tar.TypeDir {
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			n, err := writeExtracted(target, tr, fileMode(h.Mode))
			if err != nil {
				if errors.Is(err, errDamaged) {
					return nil, err
				}
				if errors.Is(err, io.ErrUnexpectedEOF) {
					return nil, fmt.Errorf("%w: its .txz is cut short in %s", errDamaged, name)
				}
				return nil, err
			}
			files = append(files, entryFile{Path: name, Size: n})
		case tar.TypeSymlink:
			if path.IsAbs(h.Linkname) || !filepath.IsLocal(path.Join(path.Dir(name), h.Linkname)) {
				return nil, fmt.Errorf("%w: its link %s points outside its directory (%s)", errDamaged, name, h.Linkname)
			}
			if err := os.Symlink(h.Linkname, target); err != nil {
				return nil, err
			}
			files = append(files, entryFile{Path: name, Link: h.Linkname})
		case tar.TypeLink:
			from := path.Clean(strings.TrimPrefix(h.Linkname, "./"))
			if !filepath.IsLocal(from) {
				return nil, fmt.Errorf("%w: its hard link %s points outside its directory (%s)", errDamaged, name, h.Linkname)
			}
			if err := os.Link(filepath.Join(root, filepath.FromSlash(from)), target); err != nil {
				return nil, fmt.Errorf("%w: its hard link %s: %v", errDamaged, name, err)
			}
			fi, err := os.Stat(target)
			if err != nil {
				return nil, err
			}
			files = append(files, entryFile{Path: name, Size: fi.Size()})
		default:
			// Devices, FIFOs and the like have no place in a PostgreSQL
			// installation.
		}
	}
}

// damagedReader marks the errors of reading an archive (a CRC that does not
// match, an xz stream that makes no sense) as errDamaged, apart from the
// errors of writing what it holds.
type damagedReader struct{ r io.Reader }

func (d damagedReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, errDamaged) {
		err = fmt.Errorf("%w: it is corrupt (%v)", errDamaged, err)
	}
	return n, err
}

// fileMode is the mode an extracted file gets: readable by everyone (the
// cluster user may be another user), executable by everyone when the
// archive says it is executable, writable by its owner only.
func fileMode(m int64) os.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func writeExtracted(name string, r io.Reader, mode os.FileMode) (int64, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
