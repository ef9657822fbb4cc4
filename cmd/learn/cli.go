package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/learn-idempotency/learn/internal/doctor"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

// envPostgres names the environment variable that gives --postgres its
// default.
const envPostgres = doctor.EnvPostgres

// globals are the flags every command takes, persistent flags of the root:
// they may come before or after the command.
type globals struct {
	databaseURL string
	postgres    string
	theme       string
	present     bool
	// preview, when set, takes the page the app would open first instead
	// of opening it (the supervisor's first frame; see firstFrame).
	preview func(first common.Open)
	// exercisesDir is the exercises' module the app offers (learn
	// exercises DIR); "" is ./learn-exercises.
	exercisesDir string
}

// register defines the global flags on fs, with their defaults from the
// environment.
func (g *globals) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.databaseURL, "database-url", os.Getenv("DATABASE_URL"),
		"use this PostgreSQL: a fresh schema in it, dropped at exit (default: $DATABASE_URL)")
	// The help shows no default: it would print the password of the URL.
	fs.Lookup("database-url").DefValue = ""
	mode := os.Getenv(envPostgres)
	if mode == "" {
		mode = string(pgtemp.Auto)
	}
	g.postgres = mode
	fs.Var(flagval.NewMode(&g.postgres), "postgres",
		"how to get a PostgreSQL: auto, url, local, docker or download (default: $"+envPostgres+", else auto: the URL if set, else local binaries, else Docker, else download it once)")
	fs.Lookup("postgres").DefValue = ""
	fs.Var(flagval.NewEnum(&g.theme, "theme", "dark", "dark", "light"), "theme", "the colours for a dark or light terminal; NO_COLOR turns colour off")
	fs.BoolVar(&g.present, "present", false, "presenter mode: big captions, a clock, no chrome; page up/down step (a presentation clicker); P toggles it")
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

// options is pgOptions for cmd, a command that uses the globals: a
// --postgres that came from the environment is checked only here
// (--postgres itself is checked as it is parsed), so that learn help and
// learn version work whatever LEARN_POSTGRES holds. A bad one is a usage
// error.
func (g *globals) options(cmd *cobra.Command) (pgtemp.Options, error) {
	opts, err := g.pgOptions()
	if err != nil {
		return opts, usageErrorf(cmd, "%v", err)
	}
	return opts, nil
}

// usageErrorf is a command line learn cannot take, for cmd: exit code 2,
// and the message sends the person to cmd's --help.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	return exit.Usagef(cmd.CommandPath(), format, args...)
}

// usageOf is err as a usage error of cmd (nil stays nil; an error that
// carries its exit code already keeps it).
func usageOf(cmd *cobra.Command, err error) error {
	if _, ok := errors.AsType[*exit.Error](err); ok || err == nil {
		return err
	}
	return usageErrorf(cmd, "%v", err)
}

// flagError is cobra's FlagErrorFunc: every flag that cannot be parsed is a
// usage error. A value one of learn's flag types refused says so in its own
// words ("--copies must be from 2 to 100, got 500").
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if iv, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		if ve, ok := errors.AsType[*flagval.Error](iv.Unwrap()); ok {
			msg = ve.Error()
		}
	}
	return exit.Usagef(cmd.CommandPath(), "%s", msg)
}
