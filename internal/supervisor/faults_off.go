//go:build !learnfaults

package supervisor

// FaultHooks says whether this build has the fault hooks of the tests
// (the learnfaults build tag): a release build has none, and ignores
// LEARN_CRASH_AFTER and LEARN_SLOW_START.
const FaultHooks = false

// InjectCrash does nothing: a release build has no fault hooks.
func InjectCrash() {}

// InjectSlowStart does nothing: a release build has no fault hooks.
func InjectSlowStart() {}
