package main

import (
	"fmt"
	"strings"
)

// benchEngine runs BenchmarkBookTicket (package sim/engine): the engine against
// pgbench running the same transaction, in interleaved rounds, the median
// ratio of the rounds with its spread; and, a row each, what each side's
// client process spent per transaction (CPU time and context switches),
// which is where a low ratio comes from.
func benchEngine(rounds int) ([]row, error) {
	results, err := goBench("./sim/engine", "BookTicket", "1x", fmt.Sprintf("-book.rounds=%d", rounds))
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
		if cpu, ok := m["cpu-µs/op"]; ok {
			rows = append(rows, row{"", "  client's cost per " + strings.TrimSuffix(unit, "s/s"),
				fmt.Sprintf("%.0f µs CPU, %.1f switches", cpu, m["switches/op"]),
				fmt.Sprintf("pgbench %.0f µs, %.1f", m["pgbench-cpu-µs/tx"], m["pgbench-switches/tx"]),
				fmt.Sprintf("%.2fx CPU", cpu/m["pgbench-cpu-µs/tx"]), ""})
		}
	}
	return rows, nil
}
