package main

import (
	"fmt"
	"os"
)

// benchSize builds learn as a release would (-trimpath -ldflags "-s -w")
// and reports its size.
func benchSize(dir string) ([]row, error) {
	bin, err := build(dir, "learn-release", "./cmd/learn")
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return nil, err
	}
	return []row{{"size", "release build (-trimpath -s -w)", fmt.Sprintf("%.1f MiB", float64(fi.Size())/(1<<20)), "", "", "< 30 MiB"}}, nil
}
