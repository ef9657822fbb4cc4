package quiz

import (
	"math/rand/v2"
	"slices"
)

// Shuffle returns a permutation of 0..n-1 for showing n items (the steps of
// an order question, or choices) in a new order: item perm[i] goes at
// position i. The same seed gives the same permutation. For n > 1 the
// permutation is never the identity, so an order question never starts out
// solved. For n == 1 it is [0]; for n <= 0 it is empty.
func Shuffle(n int, seed int64) []int {
	if n <= 0 {
		return []int{}
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	perm := r.Perm(n)
	if n > 1 && isIdentity(perm) {
		// Rotate by one: a derangement, so certainly not the identity.
		for i := range perm {
			perm[i] = (i + 1) % n
		}
	}
	return perm
}

func isIdentity(perm []int) bool {
	for i, v := range perm {
		if i != v {
			return false
		}
	}
	return true
}

// Shown is the order in which a list of items (a question's choices, its
// places to look, its steps, the choices of a blank) is on screen: the item
// at position pos is Shown[pos], an index into the question's own list. The
// learner points at positions; graders and saved answers take items, so an
// answer means the same whatever order it was picked in.
type Shown []int

// ShowOrder returns the order for showing n items on an attempt with the
// given seed: the permutation [Shuffle] gives, unless it equals prev (the
// order the previous attempt showed), in which case it is turned so that a
// retake never shows the same order twice in a row. For n > 2 the result
// is neither the identity nor prev; for n == 2 it differs from prev (so it
// may be the identity); for n == 1 it is [0].
func ShowOrder(n int, seed int64, prev Shown) Shown {
	perm := Shuffle(n, seed)
	if n < 2 || !slices.Equal(perm, prev) {
		return perm
	}
	if n == 2 {
		return Shown{prev[1], prev[0]}
	}
	// Turning the list by k positions moves every item, so the result
	// differs from prev; at most one k gives the identity.
	for k := 1; ; k++ {
		turned := make(Shown, n)
		for i := range turned {
			turned[i] = perm[(i+k)%n]
		}
		if !isIdentity(turned) {
			return turned
		}
	}
}

// Item is the item at position pos.
func (s Shown) Item(pos int) int { return s[pos] }

// Position is where item is shown, or -1 when s does not show it.
func (s Shown) Position(item int) int { return slices.Index(s, item) }

// Items maps positions to the items shown there, in the same order.
func (s Shown) Items(positions []int) []int {
	out := make([]int, len(positions))
	for i, p := range positions {
		out[i] = s[p]
	}
	return out
}
