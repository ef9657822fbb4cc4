package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/sim"
)

// complete asks learn what the shell should offer after args, as the
// completion scripts do (learn __complete ARGS… WORD), and returns the
// completions without their descriptions and the directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if code != 0 {
		t.Fatalf("learn __complete %q: exit %d\n%s", args, code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if err != nil {
		t.Fatalf("no directive in %q", out)
	}
	var names []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		names = append(names, name)
	}
	return names, cobra.ShellCompDirective(d)
}

// No command offers file names where it takes none (every command: none
// takes a file as an argument), and lab --set offers the switches, then the
// values of the switch named. Before, the shell offered the current
// directory's files for race, doctor, serve, workshop, version and lab, and
// for lab --set.
func TestCompletionOffersNoFilesWhereNoneAreTaken(t *testing.T) {
	for _, cmd := range []string{"race", "doctor", "workshop", "version", "lab", "progress reset", "progress export"} {
		args := append(strings.Fields(cmd), "")
		names, d := complete(t, args...)
		if d&cobra.ShellCompDirectiveNoFileComp == 0 || len(names) > 0 {
			t.Errorf("learn %s <TAB> offers %q with directive %d: files, or names it does not take", cmd, names, d)
		}
	}
	// learn serve takes one scenario name, whose design it serves.
	if names, d := complete(t, "serve", ""); d&cobra.ShellCompDirectiveNoFileComp == 0 || len(names) != len(sim.Scenarios()) {
		t.Errorf("learn serve <TAB> offers %q with directive %d, want the %d scenarios and no files", names, d, len(sim.Scenarios()))
	}
	var want []string
	for _, s := range sim.LabSwitches() {
		want = append(want, s.Name+"=")
	}
	names, d := complete(t, "lab", "--set", "")
	if !slices.Equal(names, want) || d&cobra.ShellCompDirectiveNoFileComp == 0 || d&cobra.ShellCompDirectiveNoSpace == 0 {
		t.Errorf("learn lab --set <TAB> offers %q with directive %d, want %q without files or a space after", names, d, want)
	}
	for _, s := range sim.LabSwitches() {
		var values []string
		for _, v := range s.Values {
			values = append(values, s.Name+"="+v)
		}
		names, d := complete(t, "lab", "--set", s.Name+"=")
		if !slices.Equal(names, values) || d&cobra.ShellCompDirectiveNoFileComp == 0 {
			t.Errorf("learn lab --set %s=<TAB> offers %q with directive %d, want %q without files", s.Name, names, d, values)
		}
	}
}
