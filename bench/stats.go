package main

import (
	"slices"
	"time"
)

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pairs measures a and b in turn, rounds times (a b, then b a, then a b…,
// so neither always goes first), and returns each one's times and the
// ratio a/b of each round, the pair measured back to back.
func pairs(rounds int, a, b func() (float64, error)) (as, bs, ratios []float64, err error) {
	for i := range rounds {
		var x, y float64
		if i%2 == 0 {
			if x, err = a(); err == nil {
				y, err = b()
			}
		} else {
			if y, err = b(); err == nil {
				x, err = a()
			}
		}
		if err != nil {
			return nil, nil, nil, err
		}
		as, bs, ratios = append(as, x), append(bs, y), append(ratios, x/y)
	}
	return as, bs, ratios, nil
}
