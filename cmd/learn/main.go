// Command learn is a terminal tutorial on idempotency keys for booking
// retries: read the lesson, watch the lost-answer sequence play against a
// real booking engine on a throwaway PostgreSQL, and run it headless.
//
// This package is main and the command tree (cobra, styled by fang): the
// commands, their flags and their usage errors. What the commands do is
// elsewhere: the app in internal/ui (and the supervisor's first frame),
// the headless commands' runs and reports in internal/headless (demo,
// lab, check and exercises with their command lines read, progress,
// download lines), learn serve in internal/serve, learn workshop in
// internal/workshop, learn doctor in internal/doctor, the crash
// supervisor in internal/supervisor and what it hands the app's process
// in internal/childenv. The flags' value types are internal/flagval's;
// the exit codes, the signals' root context and the printing of the
// error are internal/exit's.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"charm.land/fang/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/childenv"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/fdlimit"
	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

// The exit codes of learn, in one table (the root's help shows it); the
// exit package carries them.
const (
	exitOK         = exit.OK                    // done
	exitFailure    = exit.Failure               // something failed; the message says what and what to do
	exitUsage      = exit.Usage                 // a command line learn cannot take
	exitInterrupt  = 128 + int(syscall.SIGINT)  // interrupted: Ctrl-C
	exitTerminated = 128 + int(syscall.SIGTERM) // terminated (a closed terminal, SIGHUP, gives 129)
	exitBrokenPipe = exit.BrokenPipe            // the output's reader left (learn lesson | head), silently
)

func main() {
	// A closed stdout or stderr (learn serve | tee, then Ctrl-C, which
	// ends tee first) must not kill learn in the middle of its shutdown:
	// with SIGPIPE ignored a write there fails with EPIPE instead, and
	// learn goes on to drop what it made. Both the supervisor and the app
	// run this line: an ignored signal is not one Go ignores after exec.
	signal.Ignore(syscall.SIGPIPE)
	// Before anything opens a file: with too few (ulimit -n 8) the Go
	// runtime itself dies making its poller, with a goroutine dump.
	if err := fdlimit.CheckStart(); err != nil {
		fmt.Fprintln(os.Stderr, "learn: "+err.Error())
		os.Exit(exitFailure)
	}
	args := os.Args[1:]
	cfg := supervisorConfig(args)
	cfg.Env, cfg.Stdin, cfg.Stdout, cfg.Stderr = childenv.Environ(), os.Stdin, os.Stdout, os.Stderr
	if code, ok := supervisor.Run(cfg); ok {
		os.Exit(code)
	}
	supervisor.HandleJobControl() // Ctrl+Z and kill -TSTP: the app gives the terminal back first
	supervisor.InjectSlowStart()
	ctx, stop := exit.RootContext()
	childenv.Take()
	supervisor.InjectCrash()
	stdin := os.Stdin
	os.Stdin = noTerminal()
	code := run(ctx, args, stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// supervisorConfig is what the supervisor needs to know of learn run with
// args, without its streams and environment, read from one command tree
// (inspect): whether the app takes the terminal, the app's first frame, and
// how to reap a crashed child's PostgreSQL.
func supervisorConfig(args []string) supervisor.Config {
	l := inspect(args)
	return supervisor.Config{
		Args:       args,
		FullScreen: l.fullScreen,
		FirstFrame: l.firstFrame,
		Reap: func(ctx context.Context, logf func(string, ...any)) error {
			return pgtemp.ReapAll(ctx, l.postgres, logf)
		},
	}
}

// noTerminal is what learn leaves in os.Stdin once main has taken the
// terminal to hand it down (run's stdin): a file that is no terminal. fang
// asks the terminal for its background colour (OSC 11, then DA1) before
// every help text and error it renders, whenever os.Stdout is a terminal:
// on standard input, then again on standard output, waiting up to 2 s for
// each answer, so 4 s at a terminal that does not answer (Emacs' shell
// mode, CI), TERM=dumb and NO_COLOR=1 included. fang v2.0.1 has no option
// against it (theme.go, mustColorscheme), and lipgloss asks only when
// os.Stdin is a terminal. learn picks its colours without asking (--theme,
// dark by default), and every command reads the stdin run gives it.
func noTerminal() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return os.Stdin
	}
	return f
}

// run runs learn with args (without the program's name) and returns its
// exit code (the table above). Errors are printed once, to stderr. When a
// signal ends ctx (exit.RootContext) the code is 128 + the signal and the
// message says "interrupted" (or "terminated", "hangup"), whatever the
// command was doing.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	handle := exit.Handler(stderr)
	// What the commands return is printed here, not by fang, whose error
	// path asks the terminal for its background colour: a learn in the
	// background would stop on SIGTTOU in the question, and even at the
	// front learn never waits on a terminal's answer (design.md). fang
	// still prints what cobra itself refuses (flags, arguments), before any
	// command runs.
	var failed error
	catchErrors(root, &failed)
	err := fang.Execute(ctx, root,
		fang.WithVersion(version()),
		// The colours of --theme (dark by default), never the terminal's
		// answer to a question (see noTerminal).
		fang.WithColorSchemeFunc(func(lipgloss.LightDarkFunc) fang.ColorScheme {
			return fang.DefaultColorScheme(lipgloss.LightDark(g.theme != "light"))
		}),
		fang.WithErrorHandler(func(w io.Writer, styles fang.Styles, err error) {
			handle(w, styles, exit.BySignal(ctx, err))
		}))
	if failed != nil {
		err = exit.BySignal(ctx, failed)
		handle(colorprofile.NewWriter(stderr, os.Environ()), exit.Styles(stderr), err)
	}
	return exit.Code(exit.BySignal(ctx, err))
}

// catchErrors makes every command of the tree under root store the error
// its RunE returns in *failed and return nil to cobra.
func catchErrors(c *cobra.Command, failed *error) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := run(cmd, args); err != nil {
				*failed = err
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		catchErrors(sub, failed)
	}
}

// version is learn's version as the build recorded it, for --version and
// learn version.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module support)"
	}
	return formatVersion(info)
}

// formatVersion is the module's version (a tag such as v1.2.0, a
// pseudo-version, or "(devel)"), then, when the build recorded them, the
// commit (its first 12 hex digits) and whether the work tree had changes:
// "v0.0.0-20260101120000-0123456789ab+dirty (commit 0123456789ab, modified)".
// Unlike fang's default, it does not need a module checksum, which a build
// from a checkout never has.
func formatVersion(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " (commit " + rev[:min(12, len(rev))]
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v
}

// launch is what a command line is to the supervisor, read from one
// command tree as the child will read it.
type launch struct {
	// fullScreen says the command runs the full-screen app (annotation
	// annFullScreen); the supervisor also needs a terminal for that.
	fullScreen bool
	// g is the global flags as the command line set them.
	g *globals
	// first is the page the app opens first, nil when the command line
	// does not open the app or cannot be taken (the child says why).
	first *common.Open
	// postgres is the child's --database-url and --postgres (or their
	// environment defaults): where a crashed child's PostgreSQL is.
	postgres pgtemp.Options
}

// inspect reads args as the child will, without running anything: a
// command line that opens the app is run with the preview hook (g.preview),
// which names the first page and returns; any other only has its flags
// parsed (running it would run it: learn serve, learn workshop).
func inspect(args []string) launch {
	g := &globals{}
	var first *common.Open
	g.preview = func(o common.Open) { first = &o }
	root := newRoot(g)
	root.InitDefaultHelpCmd() // learn help is no app
	root.SilenceErrors, root.SilenceUsage = true, true
	// Only the app's own process speaks: --help here printed cobra's plain
	// help, in raw mode, before the child printed fang's. Standard output
	// still reads as the terminal it is, so that a command that opens the
	// app only at a terminal (learn lesson, learn interview) decides here as
	// it will in the app's process.
	root.SetOut(quietTerminal{os.Stdout})
	root.SetErr(io.Discard)
	l := launch{g: g}
	cmd, rest, err := root.Find(args)
	if err == nil && cmd.Annotations[annFullScreen] == "true" {
		l.fullScreen = true
		root.SetArgs(args)
		if err := root.ExecuteContext(context.Background()); err != nil {
			first = nil
		}
	} else {
		if err != nil {
			cmd, rest = root, args
		}
		cmd.FParseErrWhitelist.UnknownFlags = true // --help and the like
		_ = cmd.ParseFlags(rest)
	}
	opts, err := g.pgOptions()
	if err != nil {
		first = nil // the app's process says why
		opts = pgtemp.Options{DatabaseURL: g.databaseURL}
	}
	l.first, l.postgres = first, opts
	return l
}

// quietTerminal is standard output as the inspected command line sees it:
// the same file descriptor (a terminal or not), and writes that go
// nowhere.
type quietTerminal struct{ f *os.File }

func (q quietTerminal) Write(p []byte) (int, error) { return len(p), nil }
func (q quietTerminal) Fd() uintptr                 { return q.f.Fd() }

func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}
