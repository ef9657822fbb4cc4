package main

import "fmt"

// benchStart runs BenchmarkTimeToReady (package pgtemp): the warm start of
// the throwaway PostgreSQL (a copied template) against initdb + pg_ctl
// start, like for like (--no-sync, fsync=off) and with their defaults.
func benchStart() ([]row, error) {
	results, err := goBench("./pgtemp", "TimeToReady/^(baseline|baseline-synced|warm-local)$", "5x")
	if err != nil {
		return nil, err
	}
	ms := map[string]float64{}
	var warm map[string]float64
	for _, r := range results {
		ms[r.name] = r.metrics["ms/op"]
		if r.name == "TimeToReady/warm-local" {
			warm = r.metrics
		}
	}
	if warm == nil {
		return nil, fmt.Errorf("no warm-local result")
	}
	return []row{
		{"start", "warm start vs initdb+pg_ctl, like for like", fmt.Sprintf("%.0f ms", ms["TimeToReady/warm-local"]),
			fmt.Sprintf("%.0f ms", ms["TimeToReady/baseline"]), fmt.Sprintf("%.1fx faster", warm["speedup"]), "≥ 4x"},
		{"start", "warm start vs initdb+pg_ctl, their defaults", fmt.Sprintf("%.0f ms", ms["TimeToReady/warm-local"]),
			fmt.Sprintf("%.0f ms", ms["TimeToReady/baseline-synced"]), fmt.Sprintf("%.1fx faster", warm["speedup-vs-synced"]), ""},
	}, nil
}
