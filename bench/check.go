package main

import "fmt"

// benchCheck runs BenchmarkWholeCheck (package sim/check): a whole learn
// check of learn's own API on two instances, every scenario, every race
// round.
func benchCheck() ([]row, error) {
	results, err := goBench("./sim/check", "WholeCheck", "5x")
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("no WholeCheck result")
	}
	ms := results[0].metrics["ns/op"] / 1e6
	return []row{{"check", "a whole learn check of one endpoint (11 scenarios, 2 API instances)", fmt.Sprintf("%.2f s", ms/1000), "", "", "< 10 s"}}, nil
}
