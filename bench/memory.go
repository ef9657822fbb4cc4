package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// peakWatcher follows every process whose program is bin, as often as it
// can, and keeps the largest peak resident set size (VmHWM) any of them
// reached: learn runs as two processes (the crash supervisor and the
// app), and the figure is the larger. PostgreSQL's processes are not
// counted: they are the server's, not learn's.
type peakWatcher struct {
	bin  string
	stop chan struct{}
	done chan int64 // the peak in KiB
}

func watchPeak(bin string) *peakWatcher {
	w := &peakWatcher{bin: bin, stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var peak int64
		for {
			for _, pid := range pidsOf(bin) {
				if kb := vmHWM(pid); kb > peak {
					peak = kb
				}
			}
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return w
}

// Peak stops watching and returns the peak in MiB.
func (w *peakWatcher) Peak() float64 {
	close(w.stop)
	return float64(<-w.done) / 1024
}

// pidsOf lists the processes whose executable is bin.
func pidsOf(bin string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// vmHWM is a process's peak resident set size in KiB, 0 when it is gone.
func vmHWM(pid string) int64 {
	f, err := os.Open(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// benchMemory measures learn's peak memory in a race of 100 copies (learn
// demo concurrent-copies --copies 100, the engine, the HTTP API and 100
// browsers on one throwaway PostgreSQL) and while reading the whole lesson
// in the reader (learn lesson in tmux, paged to the end).
func benchMemory(dir string) ([]row, error) {
	learn, err := build(dir, "learn", "./cmd/learn")
	if err != nil {
		return nil, err
	}
	state := filepath.Join(dir, "state-memory")
	var rows []row

	var races []float64
	for range 3 {
		w := watchPeak(learn)
		cmd := exec.Command(learn, "demo", "concurrent-copies", "--copies", "100", "--json")
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		out, err := cmd.CombinedOutput()
		peak := w.Peak()
		if err != nil {
			return rows, fmt.Errorf("learn demo concurrent-copies --copies 100: %v\n%s", err, out)
		}
		races = append(races, peak)
	}
	rows = append(rows, row{"memory", "race of 100 copies (peak RSS)", fmt.Sprintf("%.1f MiB", median(races)), "", "", "< 60 MB"})

	t, err := newTmux(100, 30)
	if err != nil {
		return rows, err
	}
	defer t.close()
	var reads []float64
	for i := range 3 {
		w := watchPeak(learn)
		name := fmt.Sprintf("read%d", i)
		if _, err := t.firstFrame(name, "env XDG_STATE_HOME="+state+" "+learn+" lesson", "In 1 minute"); err != nil {
			w.Peak()
			return rows, err
		}
		// Page through to the end: every part of the page is drawn once.
		for range 40 {
			_ = t.cmd("send-keys", "-t", "="+name+":", "PageDown").Run()
		}
		_ = t.cmd("send-keys", "-t", "="+name+":", "End").Run()
		time.Sleep(300 * time.Millisecond) // let the last frames draw before quitting
		t.end(name, []string{"q"})
		reads = append(reads, w.Peak())
	}
	rows = append(rows, row{"memory", "reading the lesson (peak RSS)", fmt.Sprintf("%.1f MiB", median(reads)), "", "", "< 40 MB"})
	return rows, nil
}
