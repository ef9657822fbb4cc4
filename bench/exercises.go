package main

import "fmt"

// benchExercises runs the benchmarks of package exercises: a save and its
// scorecard for one exercise (go build again with a warm cache, the tables,
// two API instances of the learner's program, the checks up to the
// exercise), and the whole ladder on learn's reference solution.
func benchExercises() ([]row, error) {
	results, err := goBench("./exercises", "SaveToScorecard|WholeLadder", "5x")
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, r := range results {
		s := r.metrics["ns/op"] / 1e9
		switch r.name {
		case "SaveToScorecard":
			rows = append(rows, row{"exercises", "a save to its scorecard, one exercise (build, tables, 2 instances, its checks)", fmt.Sprintf("%.2f s", s), "", "", "< 5 s"})
		case "WholeLadder":
			rows = append(rows, row{"exercises", "the whole ladder on the reference solution", fmt.Sprintf("%.2f s", s), "", "", "< 60 s"})
		}
	}
	if len(rows) != 2 {
		return rows, fmt.Errorf("want 2 results of package exercises, got %d", len(rows))
	}
	return rows, nil
}
