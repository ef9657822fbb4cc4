package workshop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/charmbracelet/x/term"
	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/supervisor"
)

// This file is learn workshop as a command runs it (Run): the summary's
// directory checked first, the workshop started, its intro printed, the
// dashboard (or a log) until Ctrl-C, then the end and the room's summary,
// kept elsewhere when its directory failed meanwhile.

// Run is learn workshop: it runs a workshop until Ctrl-C, SIGTERM or SIGHUP (ctx ends),
// or until the presenter presses Ctrl-C on the dashboard: the dashboard
// when in and out are a terminal, else a log on out. It ends the workshop
// and writes the room's summary into summaryDir, checked before anything
// starts. Ending it so is its normal end: 0. A failure to start is 1,
// before anything is left (a summaryDir that cannot be written included);
// a summaryDir that fails at the end is 1 too, the summary kept elsewhere
// (keepSummary) and its path said.
//
// Without the dashboard, the summary's path and the last line go to errOut
// as well: out's reader may have gone with the same Ctrl-C (learn workshop
// | tee ws.log), and the path is what the presenter needs afterwards.
func Run(ctx context.Context, cfg Config, summaryDir, theme string, in io.Reader, out, errOut io.Writer) (int, error) {
	say := func(format string, args ...any) { fmt.Fprintf(out, "learn workshop: "+format+"\n", args...) }
	dashboard := isTerminal(in) && isTerminal(out)
	last := func(format string, args ...any) { // a line that must be seen
		say(format, args...)
		if !isTerminal(out) {
			fmt.Fprintf(errOut, "learn workshop: "+format+"\n", args...)
		}
	}
	var quiet atomic.Bool // the dashboard is on screen: the log would draw over it
	cfg.Logf = func(format string, args ...any) {
		if !quiet.Load() {
			say(format, args...)
		}
	}
	if summaryDir == "" {
		d, err := DefaultSummaryDir()
		if err != nil {
			return exit.Failure, fmt.Errorf("%w; pass --summary-dir", err)
		}
		summaryDir = d
	}
	// Before the port and PostgreSQL, as the host key: a directory that
	// cannot take the summary is said now, not after the workshop.
	if err := CheckSummaryDir(summaryDir); err != nil {
		return exit.Failure, err
	}
	// A workshop before this one that never ended (killed, crashed, a
	// power cut) left its room's summary: said now, where it is.
	for _, k := range keptSummaries(summaryDir) {
		say("%s", k)
	}
	cfg.SummaryDir = summaryDir
	ws, err := Start(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			say("stopped before the workshop was ready")
			return exit.OK, nil
		}
		return exit.Failure, err
	}
	printWorkshopIntro(out, ws, cfg, dashboard)
	// A workshop is never suspended (kill -TSTP %1; Ctrl+Z is a key of
	// the dashboard): every attendee's session runs in this process and
	// would freeze with it. The SIGTSTP learn catches is only said.
	supervisor.SuspendHandler(func() {
		cfg.Logf("not suspended (SIGTSTP): the attendees' sessions run in this process; Ctrl-C ends the workshop")
	})
	defer supervisor.SuspendHandler(nil)
	var presentErr error
	if dashboard {
		quiet.Store(true)
		presentErr = ws.Present(ctx, in, out, theme)
		quiet.Store(false)
	} else {
		select {
		case <-ctx.Done():
		case <-ws.Done():
		}
	}
	say("ending: every attendee is told, every schema dropped")
	sum, closeErr := ws.Close()
	path, sumErr := ws.SummaryFile()
	if sumErr != nil { // the directory failed by the end: elsewhere, or printed
		path, sumErr = keepSummary(summaryDirs(summaryDir)[1:], sum, errOut, sumErr)
	}
	attendees := english.Plural(len(sum.Attendees), "attendee", "")
	switch {
	case sumErr == nil:
		last("the room's summary (%s): %s", attendees, path)
	case path != "":
		say("%v", sumErr)
		last("the room's summary (%s), written there instead: %s", attendees, path)
		sumErr = fmt.Errorf("%w; the room's summary was written to %s instead", sumErr, path)
	default:
		say("%v", sumErr)
		sumErr = fmt.Errorf("%w, nor anywhere else: the room's summary is printed above as JSON; save it from there", sumErr)
	}
	if err := errors.Join(ws.Err(), presentErr); err != nil {
		return exit.Failure, err
	}
	// The signal is the workshop's normal end: what could not be cleaned up
	// or kept on the way out is said as it is, exit 1, not as the signal.
	for _, err := range []error{closeErr, sumErr} {
		if err != nil {
			return exit.Failure, exit.Cleanup(err)
		}
	}
	last("ended")
	return exit.OK, nil
}

// keptSummaries is the summaries that workshops before this one left
// (those that never ended) or keep now, as their markers in learn's
// summary directory and in dir say; each of the first kind is said once.
func keptSummaries(dir string) []KeptSummary {
	dirs := []string{dir}
	if d, err := DefaultSummaryDir(); err == nil && d != dir {
		dirs = append(dirs, d)
	}
	var out []KeptSummary
	for _, d := range dirs {
		k, _ := KeptSummaries(d) // a directory that cannot be read holds none learn can say
		out = append(out, k...)
	}
	return out
}

// summaryDirs is where the room's summary may go at the end, in order:
// dir (the one asked for, checked at the start), then, should it fail by
// then (removed, full, unmounted), learn's default summary directory and
// the system's temporary directory.
func summaryDirs(dir string) []string {
	dirs := []string{dir}
	if d, err := DefaultSummaryDir(); err == nil {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, os.TempDir())
	return slices.Compact(dirs)
}

// keepSummary writes the room's summary into the first of dirs that takes
// it and returns the file's path; err is why each directory before it
// did not take it, after the failures given already (the directory asked
// for first; nil when none failed). When none takes it, the summary is
// printed as JSON on errOut, the last resort, and path is "": the
// attendees' scores are never lost to a directory.
func keepSummary(dirs []string, sum room.Summary, errOut io.Writer, already ...error) (path string, err error) {
	failed := dirErrors(already)
	for _, d := range dirs {
		p, werr := WriteSummary(d, sum)
		if werr == nil {
			return p, failed.err()
		}
		failed = append(failed, werr)
	}
	data, jerr := json.MarshalIndent(sum, "", "  ")
	if jerr != nil {
		return "", errors.Join(failed.err(), jerr)
	}
	fmt.Fprintf(errOut, "learn workshop: no directory took the room's summary (%s); here it is as JSON, to save:\n%s\n", failed, data)
	return "", failed.err()
}

// dirErrors is why each directory tried failed, in order: one line, the
// reasons separated by "; ", each still matched by errors.Is and As.
type dirErrors []error

func (d dirErrors) Error() string {
	s := make([]string, len(d))
	for i, err := range d {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (d dirErrors) Unwrap() []error { return d }

// err is d as an error, nil when nothing failed.
func (d dirErrors) err() error {
	if len(d) == 0 {
		return nil
	}
	return d
}

// printWorkshopIntro says how to join, with the code and the host key,
// and warns when the server is reachable beyond this machine.
func printWorkshopIntro(w io.Writer, ws *Workshop, cfg Config, dashboard bool) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	path, fingerprint := ws.HostKey()
	p("learn workshop: PostgreSQL: %s", ws.Database())
	p("learn workshop: the room joins with (only an SSH client needed):")
	for _, line := range ws.Join() {
		p("  %s", line)
	}
	p("learn workshop: join code: %s (typed at the password prompt)", ws.Code())
	p("learn workshop: host key %s, kept in %s", fingerprint, path)
	p("learn workshop: at most %s at once; a session ends after %s without a key", english.Plural(cfg.MaxAttendees, "attendee", ""), cfg.Idle)
	if kept, _ := ws.SummaryFile(); kept != "" {
		p("learn workshop: the room's summary is kept in %s as it changes (a second behind at most), and written there a last time at the end", kept)
	}
	p("learn workshop: the attendees' runs share %s; a run that does not fit waits its turn and says so", english.Plural(ws.Budget().Stats().Total, "PostgreSQL connection", ""))
	if ws.Exposed() {
		p("learn workshop: WARNING: %s is reachable from other machines: the join code is all that lets someone in (to learn only: no shell, no files), so give it to the room alone; use --addr 127.0.0.1:%s to rehearse on this machine", cfg.Addr, portOf(ws.Addr()))
	}
	if dashboard {
		p("learn workshop: ready; the room's dashboard follows (Ctrl-C ends the workshop)")
		return
	}
	p("learn workshop: ready; Ctrl-C ends the workshop")
}

func portOf(a net.Addr) string {
	_, port, _ := net.SplitHostPort(a.String())
	return port
}

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}
