package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// runDemo runs one scenario headless on a throwaway PostgreSQL and prints
// the report: one JSON object with --json, a few lines otherwise. Exit 0
// when the run completed, 1 with a message on stderr when it could not run.
func runDemo(args []string, g *globals, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("demo", g)
	copies := fs.Int("copies", sim.DefaultCopies, "copies for concurrent-copies")
	variant := fs.String("variant", "correct", "correct or broken")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	if len(pos) != 1 {
		return 2, usageErrorf("demo takes one scenario name (%s)", scenarioNames())
	}
	if err := g.check(); err != nil {
		return 2, usageErrorf("%v", err)
	}
	s, err := sim.Lookup(pos[0])
	if err != nil {
		return 2, usageErrorf("%v", err)
	}
	v, err := sim.ParseVariant(*variant)
	if err != nil {
		return 2, usageErrorf("%v", err)
	}
	if v == sim.Broken && !s.HasBroken() {
		return 2, usageErrorf("scenario %s has no broken variant; those that have one: %s", s.Name, brokenNames())
	}
	setCopies := false
	fs.Visit(func(f *flag.Flag) { setCopies = setCopies || f.Name == "copies" })
	if setCopies && s.Name != "concurrent-copies" {
		return 2, usageErrorf("--copies is for concurrent-copies only")
	}
	if *copies < sim.MinCopies || *copies > sim.MaxCopies {
		return 2, usageErrorf("--copies must be from %d to %d, got %d", sim.MinCopies, sim.MaxCopies, *copies)
	}
	opts, err := g.pgOptions()
	if err != nil {
		return 2, err
	}

	ctx, cancel := signalContext()
	defer cancel()
	srv, err := pgtemp.Start(ctx, opts)
	if ctx.Err() != nil {
		return 130, fmt.Errorf("interrupted while PostgreSQL was starting; nothing is left behind")
	}
	if err != nil {
		return 1, err
	}
	defer srv.Close()
	run, err := s.Prepare(ctx, sim.DatabaseOf(srv.NewSchema), sim.Options{Variant: v, Copies: *copies})
	if err != nil {
		return 1, err
	}
	rep, err := run.Execute(ctx)
	if cerr := run.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return 130, fmt.Errorf("interrupted: scenario %s did not finish; its tables and PostgreSQL are removed", s.Name)
	}
	if err != nil {
		return 1, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return 0, enc.Encode(rep)
	}
	printReport(stdout, s, rep)
	return 0, nil
}

// printReport writes a report for a person: what the run was, what the
// browser saw, what the tables hold, every try, and the invariants.
func printReport(w io.Writer, s *sim.Scenario, rep *sim.Report) {
	fmt.Fprintf(w, "%s (%s): %s\n", s.Title, rep.Variant, s.Explain(rep.Variant))
	fmt.Fprintf(w, "  answers that reached the browser: %s\n", answersText(rep))
	fmt.Fprintf(w, "  answers lost on the way: %d\n", rep.Lost)
	fmt.Fprintf(w, "  booking rows: %d\n", rep.BookingRows)
	fmt.Fprintf(w, "  seats taken: %d\n", rep.SeatsTaken)
	for _, in := range rep.Attempts {
		name := fmt.Sprintf("intent %d", in.Intent)
		if in.Copy > 0 {
			name += fmt.Sprintf(" copy %d", in.Copy)
		}
		var tries []string
		for _, t := range in.Tries {
			got := t.Error
			if got == "" {
				got = fmt.Sprint(t.Status)
				if t.BookingID != "" {
					got += " " + t.BookingID
				}
				if t.Replayed {
					got += " (replay)"
				}
			}
			tries = append(tries, fmt.Sprintf("try %d → %s: %s", t.Try, t.Instance, got))
		}
		fmt.Fprintf(w, "  %s (key %s…): %s\n", name, in.Key[:8], strings.Join(tries, "; "))
	}
	fmt.Fprintln(w, "  invariants:")
	for _, inv := range rep.Invariants {
		mark := "ok    "
		if !inv.Pass {
			mark = "BROKEN"
		}
		fmt.Fprintf(w, "    %s %s (%s)\n", mark, inv.Name, inv.Detail)
	}
}

func answersText(r *sim.Report) string {
	return fmt.Sprintf("%d: %s", len(r.Answers), sim.GroupAnswers(r.Answers, true))
}

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
