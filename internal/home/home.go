// Package home finds the user's home directory for learn's own files, and
// never makes one: a home that does not exist (HOME=/nonexistent, as
// daemons and containers run learn, as root too) is no place to create
// ~/.cache/learn or ~/.local/state/learn in. The XDG variables, when set,
// are taken as they are: learn may make the directories they name.
package home

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Dir is the user's home directory (os.UserHomeDir) when it is a
// directory that exists; otherwise os.UserHomeDir's error when none is
// set, or a *Missing.
func Dir() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if h == "" {
		return "", errors.New("there is no home directory")
	}
	fi, err := os.Stat(h)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", &Missing{Path: h, Why: "does not exist (learn makes none)"}
	case err != nil:
		return "", &Missing{Path: h, Why: "cannot be used: " + err.Error()}
	case !fi.IsDir():
		return "", &Missing{Path: h, Why: "is not a directory"}
	}
	return h, nil
}

// Missing is a home directory that is set but cannot be one.
type Missing struct {
	Path string // the home as set
	Why  string // "does not exist (learn makes none)"
}

func (e *Missing) Error() string { return fmt.Sprintf("the home directory %s %s", e.Path, e.Why) }

// CacheDir is os.UserCacheDir, except that a directory it would derive
// from a home that does not exist is an error (Dir's): XDG_CACHE_HOME
// (where Go reads it) and %LocalAppData% are taken as they are.
func CacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "windows", "plan9":
		return d, nil
	case "darwin", "ios":
	default:
		if os.Getenv("XDG_CACHE_HOME") != "" {
			return d, nil
		}
	}
	if _, err := Dir(); err != nil {
		return "", err
	}
	return d, nil
}
