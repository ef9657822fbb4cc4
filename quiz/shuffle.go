package quiz

import "math/rand/v2"

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
