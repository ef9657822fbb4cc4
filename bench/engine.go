package main

import (
	"fmt"
	"strings"
)

// benchEngine runs BenchmarkBookTicket (package sim): the engine against
// pgbench running the same transaction, in interleaved rounds, the median
// ratio of the rounds with its spread.
func benchEngine(rounds int) ([]row, error) {
	results, err := goBench("./sim", "BookTicket", "1x", fmt.Sprintf("-book.rounds=%d", rounds))
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, r := range results {
		what := strings.TrimPrefix(r.name, "BookTicket/")
		unit, target := "bookings/s", "≥ 0.90x"
		if strings.HasPrefix(what, "copies") {
			unit, target = "requests/s", "≥ 0.85x"
		}
		m := r.metrics
		rows = append(rows, row{"engine", "BookTicket " + what,
			fmt.Sprintf("%.0f %s", m[unit], unit), fmt.Sprintf("pgbench %.0f tps", m["pgbench-tps"]),
			fmt.Sprintf("%.2fx (%.2f–%.2f)", m["ratio"], m["ratio-min"], m["ratio-max"]), target})
	}
	return rows, nil
}
