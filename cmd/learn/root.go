package main

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// annFullScreen marks the commands that run the full-screen app at a
// terminal; the crash supervisor holds their standard error until the
// terminal is back.
const annFullScreen = "learn.fullscreen"

// fullScreenCmd is the annotations of a full-screen command.
func fullScreenCmd() map[string]string { return map[string]string{annFullScreen: "true"} }

// rootsBuilt counts the command trees built in this process: one per
// process (TestTheCommandTreeIsBuiltOncePerProcess).
var rootsBuilt atomic.Int64

// newRoot builds learn's command tree, with the global flags parsed into g.
func newRoot(g *globals) *cobra.Command {
	rootsBuilt.Add(1)
	root := &cobra.Command{
		Use:   "learn",
		Short: "Idempotency keys for booking retries, in your terminal",
		Long:  rootLong(),
		Example: `# the app: lesson, interview card, play, race, scenarios, quizzes
learn
learn --theme light play lost-answer --variant broken
# headless
learn lesson | less
learn demo concurrent-copies --copies 10 --json
learn serve --instances 2
learn doctor`,
		Args:        noArgs("learn"),
		Annotations: fullScreenCmd(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := g.options(cmd); err != nil {
				return err
			}
			return exit.New(runApp(cmd.Context(), g, common.Open{Place: progress.Place{Page: progress.PageHome}}, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("learn version {{.Version}}\n")
	g.register(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("theme", cobra.FixedCompletions([]string{"dark", "light"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("postgres", cobra.FixedCompletions(modeNames(), cobra.ShellCompDirectiveNoFileComp))

	root.AddCommand(
		pageCmd(g, lessons.KindLesson, "idempotency"),
		pageCmd(g, lessons.KindInterview, "retry-across-instances"),
		playCmd(g),
		demoCmd(g),
		raceCmd(g),
		labCmd(g),
		serveCmd(g),
		checkCmd(g),
		exercisesCmd(g),
		workshopCmd(g),
		doctorCmd(g),
		progressCmd(),
		versionCmd(),
	)
	noFileNames(root)
	return root
}

// noFileNames makes every command that completes no names of its own
// complete none at all: no learn command takes a file name as an argument,
// and without it the shell offers the files of the current directory.
// (A flag that takes a path, such as --host-key, still completes files.)
func noFileNames(c *cobra.Command) {
	if c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 {
		c.ValidArgsFunction = cobra.NoFileCompletions
	}
	for _, sub := range c.Commands() {
		noFileNames(sub)
	}
}

// rootLong is the root's help: what learn is, the environment, and the
// exit codes.
func rootLong() string {
	return fmt.Sprintf(`learn: idempotency keys for booking retries, in your terminal. Read the lesson and the interview card, watch the lost-answer sequence play step by step against a real booking engine on a throwaway PostgreSQL, or run it headless.

Scenarios: %s

Environment:
  DATABASE_URL          the default of --database-url
  LEARN_POSTGRES        the default of --postgres (the flag wins); learn doctor says which way learn uses and why
  LEARN_POSTGRES_IMAGE  the image of the Docker way (default: %s)
  LEARN_POSTGRES_REPOSITORY  the download way's Maven repository, a mirror (default: Maven Central)
  NO_COLOR              no colour anywhere

Exit codes:
  %-3d  ok
  %-3d  failure: the message says what failed and what to do
  %-3d  usage: a command line learn cannot take
  %-3d  interrupted (Ctrl-C)
  %-3d  terminated (SIGTERM; 129 for a closed terminal, SIGHUP)
  learn serve and learn workshop end on Ctrl-C or SIGTERM by design: 0 once everything they made is gone.
  learn demo and learn lab exit 0 whatever the verdicts: the report says which designs failed.`,
		scenarioNames(), pgtemp.DefaultDockerImage,
		exitOK, exitFailure, exitUsage, exitInterrupt, exitTerminated)
}

// pageCmd is learn lesson [SLUG] or learn interview [SLUG]: the page in the
// reader at a terminal, as plain text (80 columns) otherwise.
func pageCmd(g *globals, kind lessons.Kind, def string) *cobra.Command {
	name := string(kind)
	what := map[lessons.Kind]string{lessons.KindLesson: "the lesson", lessons.KindInterview: "the interview card"}[kind]
	return &cobra.Command{
		Use:               name + " [SLUG]",
		Short:             fmt.Sprintf("Read %s (plain text when piped)", what),
		Long:              fmt.Sprintf("Read %s in the app's reader; piped, it prints as plain text, 80 columns wide.\n\nThe pages: %s (default %s)", what, pageSlugs(), def),
		Example:           fmt.Sprintf("learn %s\nlearn %s %s | less", name, name, def),
		Args:              maxOneArg(name, "page name"),
		Annotations:       fullScreenCmd(),
		ValidArgsFunction: completeOne(pageNames(kind)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.options(cmd); err != nil {
				return err
			}
			slug := def
			if len(args) == 1 {
				slug = args[0]
			}
			p, err := lessons.Get(slug)
			if err != nil {
				return usageErrorf(cmd, "%s: no page %q; the pages are: %s", name, slug, pageSlugs())
			}
			if p.Kind != kind {
				return usageErrorf(cmd, "%q is %s page: run learn %s %s", slug,
					map[lessons.Kind]string{lessons.KindLesson: "a lesson", lessons.KindInterview: "an interview"}[p.Kind], p.Kind, slug)
			}
			stdout := cmd.OutOrStdout()
			if !isTerminal(stdout) {
				out, err := markdown.Plain(p, 80)
				if err != nil {
					return exit.New(exitFailure, err)
				}
				_, err = io.WriteString(stdout, out)
				return exit.New(exitOK, err)
			}
			return exit.New(runApp(cmd.Context(), g, common.Open{Place: progress.Place{Page: progress.PageReader, Name: p.Slug}}, cmd.InOrStdin(), stdout, cmd.ErrOrStderr()))
		},
	}
}

// playCmd is learn play [SCENARIO] [--variant correct|broken].
func playCmd(g *globals) *cobra.Command {
	var variant string
	cmd := &cobra.Command{
		Use:               "play [SCENARIO]",
		Short:             "Play a scenario step by step (default lost-answer)",
		Long:              "Open the play screen on a scenario: the sequence, the live rows, the SQL and the API log, step by step.\n\nScenarios: " + scenarioNames() + "\nWith a broken variant: " + brokenNames(),
		Example:           "learn play\nlearn play last-seats --variant broken\nlearn --present play lost-answer",
		Args:              maxOneArg("play", "scenario name"),
		Annotations:       fullScreenCmd(),
		ValidArgsFunction: completeOne(scenarioList()),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.options(cmd); err != nil {
				return err
			}
			name := "lost-answer"
			if len(args) == 1 {
				name = args[0]
			}
			s, v, err := lookupScenario(cmd, name, variant)
			if err != nil {
				return err
			}
			msg := common.Open{Place: progress.Place{Page: progress.PagePlay, Name: s.Name}}
			if cmd.Flags().Changed("variant") {
				msg.Variant = string(v)
			}
			return exit.New(runApp(cmd.Context(), g, msg, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	addVariantFlag(cmd, &variant)
	return cmd
}

// raceCmd is learn race: the race screen, where copies of one booking
// request race each other through the API, as an SSH session of a
// workshop opens it with "race".
func raceCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:         "race",
		Short:       "Race copies of one booking request through the API (the race screen)",
		Long:        "Open the race screen: copies of one booking request, sent at once with one idempotency key, race through the API instances to the same row lock; the screen shows each copy's answer and whether the booking was made exactly once.\n\nFor the same race headless: learn demo concurrent-copies --copies N --json",
		Example:     "learn race\nlearn demo concurrent-copies --copies 100 --json",
		Args:        noArgs("race"),
		Annotations: fullScreenCmd(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.options(cmd); err != nil {
				return err
			}
			return exit.New(runApp(cmd.Context(), g, common.Open{Place: progress.Place{Page: progress.PageRace}}, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
}

// addVariantFlag defines --variant correct|broken on cmd.
func addVariantFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().Var(flagval.NewEnum(p, "variant", string(sim.Correct), string(sim.Correct), string(sim.Broken)), "variant",
		"the design: correct, or broken (the design that fails; only scenarios that have one)")
	_ = cmd.RegisterFlagCompletionFunc("variant", cobra.FixedCompletions([]string{string(sim.Correct), string(sim.Broken)}, cobra.ShellCompDirectiveNoFileComp))
}

// lookupScenario finds scenario name and variant (correct or broken, as
// --variant took it), or says what to pass instead: a usage error.
func lookupScenario(cmd *cobra.Command, name, variant string) (*sim.Scenario, sim.Variant, error) {
	s, err := sim.Lookup(name)
	if err != nil {
		return nil, "", usageErrorf(cmd, "%v", err)
	}
	v, err := sim.ParseVariant(variant)
	if err != nil {
		return nil, "", usageErrorf(cmd, "%v", err)
	}
	if v == sim.Broken && !s.HasBroken() {
		return nil, "", usageErrorf(cmd, "scenario %s has no broken variant; those that have one: %s", s.Name, brokenNames())
	}
	return s, v, nil
}

// versionCmd is learn version: the same line as learn --version.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print learn's version (as --version does)",
		Long:  "Print learn's version from the build: the module version, and the commit and whether the tree had changes when the build recorded them.",
		Args:  noArgs("version"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "learn version %s\n", cmd.Root().Version)
			return err
		},
	}
}

// noArgs refuses any positional argument: for the root, an unknown command.
func noArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if !cmd.HasParent() {
			msg := fmt.Sprintf("unknown command %q; the commands are: %s", args[0], commandNames(cmd))
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg = fmt.Sprintf("unknown command %q: did you mean %s?", args[0], flagval.OrList(s))
			}
			return usageErrorf(cmd, "%s", msg)
		}
		return usageErrorf(cmd, "%s takes no names, got %s", name, strings.Join(args, " "))
	}
}

// maxOneArg allows at most one positional argument, a what.
func maxOneArg(name, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usageErrorf(cmd, "%s takes one %s, got %s", name, what, strings.Join(args, " "))
		}
		return nil
	}
}

// completeOne completes the first positional argument from names.
func completeOne(names []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// commandNames lists the commands a person may type, for an unknown one.
func commandNames(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// scenarioList is the scenarios' names, in the order of sim.Scenarios.
func scenarioList() []string {
	var names []string
	for _, s := range sim.Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

func scenarioNames() string { return strings.Join(scenarioList(), ", ") }

// brokenNames lists the scenarios that have a broken variant.
func brokenNames() string {
	var names []string
	for _, s := range sim.Scenarios() {
		if s.HasBroken() {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// pageNames is the slugs of the pages of kind.
func pageNames(kind lessons.Kind) []string {
	var names []string
	for _, p := range lessons.All() {
		if p.Kind == kind {
			names = append(names, p.Slug)
		}
	}
	return names
}

// pageSlugs lists every page as "slug (kind)".
func pageSlugs() string {
	var out []string
	for _, p := range lessons.All() {
		out = append(out, fmt.Sprintf("%s (%s)", p.Slug, p.Kind))
	}
	return strings.Join(out, ", ")
}

// modeNames is the values of --postgres.
func modeNames() []string {
	return []string{string(pgtemp.Auto), string(pgtemp.URL), string(pgtemp.Local), string(pgtemp.Docker), string(pgtemp.Download)}
}
