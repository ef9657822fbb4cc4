package pgsql

import "testing"

func TestIsSchemaName(t *testing.T) {
	for name, want := range map[string]bool{
		"learn_3f9a0c1d2b4e5f60": true, "learn_3F9A0C1D2B4E5F60": false, "learn_3f9a0c1d2b4e5f6": false,
		"learn_3f9a0c1d2b4e5f600": false, "learn_scratch": false, "learn": false, "xlearn_3f9a0c1d2b4e5f60": false,
	} {
		if got := IsSchemaName(name); got != want {
			t.Errorf("isSchemaName(%q) = %v", name, got)
		}
	}
}
