//go:build !race

package quietconn

// raceEnabled reports whether the tests run under the race detector, which
// allocates on its own (allocation counts are not the code's then).
const raceEnabled = false
