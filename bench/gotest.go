package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// benchResult is one line of go test -bench: the sub-benchmark's name
// (without the Benchmark prefix and the -N suffix) and its metrics by unit.
type benchResult struct {
	name    string
	metrics map[string]float64
}

// goBench runs go test -bench in pkg and returns its result lines. extra
// are the test binary's own flags (after -args).
func goBench(pkg, pattern, benchtime string, extra ...string) ([]benchResult, error) {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-timeout", "30m", pkg}
	if len(extra) > 0 {
		args = append(append(args, "-args"), extra...)
	}
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	fmt.Fprintf(os.Stderr, "bench: go test -bench %s %s: %s\n", pattern, pkg, time.Since(t0).Round(time.Second))
	var results []benchResult
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		r := benchResult{name: name, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				r.metrics[f[i+1]] = v
			}
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("go test -bench %s %s printed no results (skipped?):\n%s", pattern, pkg, out.Bytes())
	}
	return results, nil
}
