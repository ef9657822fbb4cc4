// Command bench runs every benchmark of learn's speed and size and prints
// one table of figures and of ratios against a baseline measured in the
// same run (BENCHMARKS.md has the latest table):
//
//   - first frame: learn's home screen and `learn lesson` against a bare
//     Bubble Tea v2 program (and glow, when installed), launched in tmux
//     in turn until their text is on the screen;
//   - the booking engine against pgbench running the same transaction
//     (BenchmarkBookTicket in package sim);
//   - warm start of the throwaway PostgreSQL against initdb and pg_ctl with
//     the same --no-sync and fsync=off (BenchmarkTimeToReady in pgtemp);
//   - peak memory of a race of 100 copies and of reading the lesson;
//   - the size of a release build.
//
// Run it from the repository's root:
//
//	go run ./bench                 # everything, about five minutes
//	go run ./bench -only frame     # one part: frame, engine, start, memory, size
//
// It needs tmux for the first frame and the memory of reading, and the
// PostgreSQL server binaries and pgbench for the rest; a part whose tools
// are missing says so and is skipped.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the table.
type row struct {
	part, what, figure, baseline, ratio, target string
}

func main() {
	only := flag.String("only", "", "run only these parts, comma-separated: frame, engine, start, memory, size, check, exercises")
	rounds := flag.Int("rounds", 21, "launches of each program in the first-frame benchmark")
	engineRounds := flag.Int("engine-rounds", 15, "interleaved rounds of the engine and of pgbench in the engine benchmark (-book.rounds)")
	adhocA := flag.String("a", "", "ad hoc: a command line to time against -b (markers -wa, -wb)")
	adhocB := flag.String("b", "", "ad hoc: the baseline command line")
	wa := flag.String("wa", "", "ad hoc: the text -a shows")
	wb := flag.String("wb", "", "ad hoc: the text -b shows")
	flag.Parse()
	if *adhocA != "" {
		adhoc(*adhocA, *adhocB, *wa, *wb, *rounds)
		return
	}
	want := func(part string) bool {
		return *only == "" || strings.Contains(","+*only+",", ","+part+",")
	}

	dir, err := os.MkdirTemp("", "learn-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)

	var rows []row
	var notes []string
	run := func(part string, f func() ([]row, error)) {
		if !want(part) {
			return
		}
		fmt.Fprintf(os.Stderr, "bench: %s…\n", part)
		r, err := f()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", part, err))
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", part, err)
		}
		rows = append(rows, r...)
	}
	run("size", func() ([]row, error) { return benchSize(dir) })
	run("frame", func() ([]row, error) { return benchFrame(dir, *rounds) })
	run("memory", func() ([]row, error) { return benchMemory(dir) })
	run("engine", func() ([]row, error) { return benchEngine(*engineRounds) })
	run("start", func() ([]row, error) { return benchStart() })
	run("check", func() ([]row, error) { return benchCheck() })
	run("exercises", func() ([]row, error) { return benchExercises() })

	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("learn benchmarks, %s, %d cores (%s/%s), %s, load average %s\n\n",
		time.Now().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, host,
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\twhat\tfigure\tbaseline\tratio\ttarget")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.part, r.what, r.figure, r.baseline, r.ratio, r.target)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Println("note:", n)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// build builds pkg into dir/name with the release flags and returns the
// binary's path.
func build(dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}
