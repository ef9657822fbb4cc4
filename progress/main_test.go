package progress

import (
	"os"
	"testing"
)

// TestMain runs the tests, except in a copy of this test binary started by
// TestStoreTwoProcesses, which saves progress and exits. Nothing here
// needs a database.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(storeHelper())
	}
	os.Exit(m.Run())
}
