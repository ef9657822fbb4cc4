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
// directory that exists; otherwise an error that says why and what to set.
func Dir() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("there is no home directory ($HOME is not set)")
	}
	fi, err := os.Stat(h)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("the home directory %s does not exist (learn makes none)", h)
	case err != nil:
		return "", fmt.Errorf("the home directory %s cannot be used: %w", h, err)
	case !fi.IsDir():
		return "", fmt.Errorf("the home directory %s is not a directory", h)
	}
	return h, nil
}

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
