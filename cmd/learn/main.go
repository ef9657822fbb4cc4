// Command learn is a terminal tutorial on idempotency keys for booking
// retries: read the lesson, watch the lost-answer sequence play against a
// real booking engine on a throwaway PostgreSQL, and run it headless.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/internal/doctor"
	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

const usage = `learn: idempotency keys for booking retries, in your terminal

Usage:
  learn [flags]                      the app: lesson, interview card, play
  learn lesson [idempotency]         read the lesson (plain text when piped)
  learn interview [retry-across-instances]
                                     read the interview card
  learn play [SCENARIO]              play a scenario (default lost-answer)
  learn demo SCENARIO [--copies N] [--variant correct|broken] [--json]
                                     run a scenario headless and report
  learn serve [--addr 127.0.0.1:8080] [--instances N]
                                     the booking API for curl: N API instances
                                     (1 to 8) behind a round-robin front door
  learn doctor                       check each way to get a PostgreSQL here,
                                     and say which one learn uses and why
  learn progress [reset [--yes]|export]
                                     your progress: a summary, start over
                                     (after asking), or the saved JSON
  learn help                         this text

Scenarios: %s

Flags (before or after the command):
  --database-url URL   use this PostgreSQL: a fresh schema in it, dropped at
                       exit (default: $DATABASE_URL)
  --postgres MODE      auto, url, local or docker (default: $LEARN_POSTGRES,
                       else auto: the URL if set, else local binaries, else
                       Docker)
  --theme THEME        dark or light (default: dark); NO_COLOR turns colour off
  --present            presenter mode: big captions, a clock, no chrome; page
                       up/down step (a presentation clicker); P toggles it

Environment:
  DATABASE_URL          the default of --database-url
  LEARN_POSTGRES        the default of --postgres (the flag wins)
  LEARN_POSTGRES_IMAGE  the image of the Docker way (default: %s)
`

// envPostgres names the environment variable that gives --postgres its
// default.
const envPostgres = doctor.EnvPostgres

// globals are the flags every command takes.
type globals struct {
	databaseURL string
	postgres    string
	theme       string
	present     bool
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL")
	mode := os.Getenv(envPostgres)
	if mode == "" {
		mode = "auto"
	}
	fs.StringVar(&g.postgres, "postgres", mode, "auto, url, local or docker")
	fs.StringVar(&g.theme, "theme", "dark", "dark or light")
	fs.BoolVar(&g.present, "present", false, "start in presenter mode")
}

func (g *globals) pgOptions() (pgtemp.Options, error) {
	mode, err := pgtemp.ParseMode(g.postgres)
	if err != nil {
		if env := os.Getenv(envPostgres); env != "" && env == g.postgres {
			err = fmt.Errorf("%s=%s: %w", envPostgres, env, err)
		}
		return pgtemp.Options{}, err
	}
	return pgtemp.Options{Mode: mode, DatabaseURL: g.databaseURL}, nil
}

func (g *globals) check() error {
	if g.theme != "dark" && g.theme != "light" {
		return fmt.Errorf("--theme %q: use dark or light", g.theme)
	}
	_, err := g.pgOptions()
	return err
}

func main() {
	args := os.Args[1:]
	cmdName, _ := splitCommand(args)
	if code, ok := supervisor.Run(supervisor.Config{
		Args: args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		FullScreen: cmdName == "" || cmdName == "play" || cmdName == "lesson" || cmdName == "interview",
		Reap: func(ctx context.Context, logf func(string, ...any)) error {
			return pgtemp.ReapAll(ctx, childPostgres(args), logf)
		},
	}); ok {
		os.Exit(code)
	}
	supervisor.InjectCrash()
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

// childPostgres is the PostgreSQL options of a learn that ran with args, in
// this environment: its --database-url and --postgres, picked out from among
// the other flags.
func childPostgres(args []string) pgtemp.Options {
	var g globals
	fs := newFlagSet("learn", &g)
	for rest := args; len(rest) > 0; {
		_ = fs.Parse(rest) // an error is a flag of a command, not a global one
		if next := fs.Args(); len(next) < len(rest) {
			rest = next
		} else {
			rest = rest[1:] // the command, or an argument of it
		}
	}
	opts, err := g.pgOptions()
	if err != nil {
		return pgtemp.Options{DatabaseURL: g.databaseURL}
	}
	return opts
}

// usageError is a command line learn cannot take; it exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, err := dispatch(args, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "learn:", err)
		if _, ok := errors.AsType[*usageError](err); ok {
			fmt.Fprintf(stderr, "Run 'learn help' for the commands.\n")
			return 2
		}
		return max(code, 1)
	}
	return code
}

// parse reads flags anywhere among args and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			// Go's flag package names flags with one dash; learn's take two.
			msg := strings.Replace(err.Error(), "flag provided but not defined: -", "unknown flag --", 1)
			msg = strings.Replace(msg, "flag needs an argument: -", "flag needs a value: --", 1)
			return nil, usageErrorf("%s", msg)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlagSet(name string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	return fs
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, usage, scenarioNames(), pgtemp.DefaultDockerImage)
}

func scenarioNames() string {
	var names []string
	for _, s := range sim.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var g globals
	cmd, args := splitCommand(args)
	switch cmd {
	case "help":
		if len(args) > 0 {
			return 2, usageErrorf("help takes no arguments, got %s", strings.Join(args, " "))
		}
		printUsage(stdout)
		return 0, nil
	case "demo":
		return runDemo(args, &g, stdout, stderr)
	case "progress":
		return runProgress(args, &g, stdin, stdout, stderr)
	case "serve":
		return runServe(args, &g, stdout, stderr)
	case "doctor":
		return runDoctor(args, &g, stdout, stderr)
	}
	fs := newFlagSet("learn", &g)
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	pos, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	if *help {
		printUsage(stdout)
		return 0, nil
	}
	if err := g.check(); err != nil {
		return 2, usageErrorf("%v", err)
	}
	arg := func(def string) (string, error) {
		switch len(pos) {
		case 0:
			return def, nil
		case 1:
			return pos[0], nil
		}
		return "", usageErrorf("%s takes one name, got %s", cmd, strings.Join(pos, " "))
	}
	switch cmd {
	case "":
		if len(pos) > 0 {
			return 2, usageErrorf("unknown command %q", pos[0])
		}
		return runApp(&g, openMsg{screen: screenHome}, stdin, stdout, stderr)
	case "lesson", "interview":
		def := map[string]string{"lesson": "idempotency", "interview": "retry-across-instances"}[cmd]
		slug, err := arg(def)
		if err != nil {
			return 2, err
		}
		p, err := lessons.Get(slug)
		if err != nil {
			return 2, usageErrorf("%s: no page %q; the pages are: %s", cmd, slug, pageSlugs())
		}
		if want := map[string]lessons.Kind{"lesson": lessons.KindLesson, "interview": lessons.KindInterview}[cmd]; p.Kind != want {
			return 2, usageErrorf("%q is %s page: run learn %s %s", slug, map[lessons.Kind]string{lessons.KindLesson: "a lesson", lessons.KindInterview: "an interview"}[p.Kind], p.Kind, slug)
		}
		if !isTerminal(stdout) {
			out, err := plainPage(p, 80)
			if err != nil {
				return 1, err
			}
			_, err = io.WriteString(stdout, out)
			return 0, err
		}
		return runApp(&g, openMsg{screen: screenReader, name: p.Slug}, stdin, stdout, stderr)
	case "play":
		name, err := arg("lost-answer")
		if err != nil {
			return 2, err
		}
		if _, err := sim.Lookup(name); err != nil {
			return 2, usageErrorf("%v", err)
		}
		return runApp(&g, openMsg{screen: screenPlay, name: name}, stdin, stdout, stderr)
	}
	return 2, usageErrorf("unknown command %q", cmd)
}

// splitCommand finds the command among args, which may come after global
// flags ("learn --present play lost-answer"), and returns it and the other
// arguments. A global flag's value is never taken for the command.
func splitCommand(args []string) (string, []string) {
	takesValue := map[string]bool{"database-url": true, "postgres": true, "theme": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			if takesValue[name] { // "--theme light": skip the value too
				i++
			}
			continue
		}
		rest := append(append([]string(nil), args[:i]...), args[i+1:]...)
		return a, rest
	}
	return "", args
}

// pageSlugs lists every page as "slug (kind)".
func pageSlugs() string {
	var out []string
	for _, p := range lessons.All() {
		out = append(out, fmt.Sprintf("%s (%s)", p.Slug, p.Kind))
	}
	return strings.Join(out, ", ")
}

func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
}

// runApp runs the Bubble Tea app. The throwaway PostgreSQL starts in the
// background at once and is stopped and removed on every way out: quit,
// Ctrl-C, SIGTERM, SIGHUP, or an error of the program.
func runApp(g *globals, first openMsg, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return 2, fmt.Errorf("the app needs a terminal; without one, use the plain commands:\n" +
			"  learn lesson | less          read the lesson as text\n" +
			"  learn interview | less       read the interview card as text\n" +
			"  learn demo lost-answer --json\n" +
			"  learn demo concurrent-copies --copies 10 --json\n" +
			"  learn serve                  the booking API, for curl\n" +
			"  learn doctor                 which PostgreSQL learn would use\n" +
			"  learn progress               your saved progress")
	}
	opts, err := g.pgOptions()
	if err != nil {
		return 2, err
	}
	db := launchDB(opts)
	defer db.Close()
	store, prog, notices := openProgress()
	c := &common{st: newStyles(g.theme != "light"), keys: newKeyMap(), theme: g.theme,
		docStyle: glamourStyle(g.theme, false), db: db, docs: map[docKey]string{},
		store: store, prog: prog, notices: notices}
	if g.present {
		c.present, c.presentSince = true, time.Now()
	}
	m := newModel(c, first)
	// learn handles the signals itself, to quit through the same empty last
	// frame as q does and to exit with the conventional code.
	p := tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout), tea.WithoutSignalHandler(),
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.QuitMsg); ok {
				m.quitting = true
			}
			return msg
		}))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var caught atomic.Value
	go func() {
		if sig, ok := <-sigs; ok {
			caught.Store(sig)
			p.Quit()
		}
	}()

	_, runErr := p.Run()
	m.close()
	if err := c.saveNow(func(p *quiz.Progress) { p.Resume = m.resumePoint() }); err != nil {
		fmt.Fprintln(stderr, "learn: saving where you left off:", err)
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(stderr, "learn: stopping PostgreSQL:", err)
	}
	if runErr != nil {
		return 1, runErr
	}
	if sig, ok := caught.Load().(syscall.Signal); ok {
		return 128 + int(sig), nil // 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
	}
	return 0, nil
}

// signalContext is cancelled by Ctrl-C (SIGINT), SIGTERM or SIGHUP, for the
// commands that run without the app.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}
