//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package progress

import "os"

// syncDir fsyncs a directory, so that a rename inside it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
