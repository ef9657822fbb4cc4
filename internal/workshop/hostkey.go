package workshop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	gossh "golang.org/x/crypto/ssh"
)

// HostKeyFile is the name of the host key's file.
const HostKeyFile = "workshop_host_ed25519"

// DefaultHostKeyPath is where learn keeps the workshop's host key: under
// the XDG data directory, $XDG_DATA_HOME/learn (when XDG_DATA_HOME is an
// absolute path), else ~/.local/share/learn; on macOS ~/Library/Application
// Support/learn, on Windows %LocalAppData%\learn.
func DefaultHostKeyPath() (string, error) {
	return hostKeyPath(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func hostKeyPath(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	if x := getenv("XDG_DATA_HOME"); x != "" && (filepath.IsAbs(x) || strings.HasPrefix(x, "/")) {
		return filepath.Join(x, "learn", HostKeyFile), nil
	}
	if goos == "windows" {
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "learn", HostKeyFile), nil
		}
		return "", errors.New("%LocalAppData% is not set, so learn has nowhere to keep the workshop's host key; set it or XDG_DATA_HOME, or pass --host-key")
	}
	h, err := home()
	if err != nil || h == "" {
		return "", fmt.Errorf("no home directory to keep the workshop's host key in (%v); set HOME or XDG_DATA_HOME, or pass --host-key", err)
	}
	if goos == "darwin" || goos == "ios" {
		return filepath.Join(h, "Library", "Application Support", "learn", HostKeyFile), nil
	}
	return filepath.Join(h, ".local", "share", "learn", HostKeyFile), nil
}

// prepareHostKey makes the host key's directory (0700) so that wish can
// write a new key there, and checks that a key already there is a file
// that holds a private key learn can use.
func prepareHostKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cannot keep the host key in %s: %w; pass --host-key with a file in a directory you can write", filepath.Dir(path), err)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read the host key %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return hostKeyError(path, errors.New("not a regular file"))
	}
	// Read now, as the server will, so that a file that is not a key is
	// said before PostgreSQL starts.
	data, err := os.ReadFile(path)
	if err != nil {
		return hostKeyError(path, err)
	}
	if _, err := gossh.ParsePrivateKey(data); err != nil {
		return hostKeyError(path, err)
	}
	return nil
}

// hostKeyError is the error for a host key file that is there but cannot
// be used (not a key, not a file, not readable). learn makes a key only
// where no file is, so it never made this one as it stands: the error
// says to pass another path and never advises removing the file, which
// is left as it is.
func hostKeyError(path string, err error) error {
	return fmt.Errorf("the host key %s cannot be used (%v): learn leaves it as it is; pass --host-key with the key file learn made for earlier workshops, or with a path where no file is yet, for a new key (attendees then see a new host key)", path, err)
}
