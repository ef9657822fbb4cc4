//go:build linux

package owner

import (
	"os/exec"
	"testing"
)

func TestSchemaOwnerRules(t *testing.T) {
	me := ThisSchema()
	if o, ok := ParseSchema(me.Comment()); !ok || o != me {
		t.Fatalf("parseSchemaOwner(%q) = %+v, %v", me.Comment(), o, ok)
	}
	if me.BootID == "" || me.PIDNS == "" || me.Ticks == "" || me.Host == "" {
		t.Fatalf("this process's owner record lacks a field on Linux: %+v", me)
	}
	deadCmd := exec.Command("true")
	if err := deadCmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := deadCmd.Process.Pid
	with := func(f func(*Schema)) Schema {
		o := me
		f(&o)
		return o
	}
	tests := []struct {
		name string
		o    Schema
		gone bool
	}{
		{"this process", me, false},
		{"a dead pid", with(func(o *Schema) { o.PID = dead }), true},
		{"our pid, another start time", with(func(o *Schema) { o.Ticks = "1" }), true},
		{"our pid, no start time recorded", with(func(o *Schema) { o.Ticks = "" }), false},
		{"another host", with(func(o *Schema) { o.PID, o.Host = dead, "elsewhere" }), false},
		{"another boot", with(func(o *Schema) { o.PID, o.BootID = dead, "not-this-boot" }), false},
		{"no boot id", with(func(o *Schema) { o.PID, o.BootID = dead, "" }), false},
		{"another pid namespace", with(func(o *Schema) { o.PID, o.PIDNS = dead, "pid:[1]" }), false},
	}
	for _, tt := range tests {
		gone, why, leave := tt.o.Gone()
		if gone != tt.gone || (gone && why == "") || (!gone && tt.o.PID == dead && leave == "") {
			t.Errorf("%s: gone = %v, %q, %q; want %v", tt.name, gone, why, leave, tt.gone)
		}
	}
	for _, c := range []string{"", "learn owner:", "learn owner: {}", `learn owner: {"pid":1}`, `learn owner: {"host":"h"}`, `{"pid":1,"host":"h"}`} {
		if o, ok := ParseSchema(c); ok {
			t.Errorf("parseSchemaOwner(%q) = %+v, want not ours", c, o)
		}
	}
}
