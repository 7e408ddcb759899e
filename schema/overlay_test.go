package schema_test

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestCPUOnlyRunKeepsZeroAccelerators: --set hardware.accelerator_count=0
// states a CPU-only server; it was dropped as empty (the count stayed
// unknown and left the manifest's JSON).
func TestCPUOnlyRunKeepsZeroAccelerators(t *testing.T) {
	m := &schema.Manifest{Unknown: []string{"hardware.accelerator_count"}}
	if err := schema.ApplyOverlay(m, nil, []string{"hardware.accelerator=none", "hardware.accelerator_count=0"}); err != nil {
		t.Fatal(err)
	}
	if n, ok := m.Hardware.Accelerators(); !ok || n != 0 {
		t.Fatalf("accelerator count %d, stated %v; want 0, stated", n, ok)
	}
	if len(m.Unknown) != 0 || !schema.FieldSet(m, "hardware.accelerator_count") {
		t.Errorf("unknown %v: a stated 0 is set", m.Unknown)
	}
	for _, f := range schema.MissingMustState(m) {
		if f == "hardware.accelerator_count" {
			t.Error("a stated 0 is reported missing")
		}
	}
	b, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"accelerator_count": 0`) {
		t.Errorf("the manifest drops the stated 0:\n%s", b)
	}
	if got := m.HardwareSummary(); got != "0 × none" {
		t.Errorf("summary %q", got)
	}
}

// TestSetOfAListSaysHowToGiveOne: --set engine.args=... with a plain
// string names the field and shows the JSON list to give instead.
func TestSetOfAListSaysHowToGiveOne(t *testing.T) {
	err := schema.ApplyOverlay(&schema.Manifest{}, nil, []string{"engine.args=--ctx-size 512"})
	want := `engine.args must be a list, not a string; give the list as JSON, quoted for the shell: --set 'engine.args=["--ctx-size","512"]'`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want %q", err, want)
	}
	m := &schema.Manifest{}
	if err := schema.ApplyOverlay(m, nil, []string{`engine.args=["--ctx-size","512"]`}); err != nil || len(m.Engine.Args) != 2 {
		t.Fatalf("the list as shown: %v, args %q", err, m.Engine.Args)
	}
}
