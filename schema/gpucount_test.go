package schema_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestGPUDeviceCountContradictingTheHardwareIsInvalid: a run whose
// accelerator scrapes count other than the accelerators its hardware
// states is invalid; one stating no count, or the same count, is not; an
// imported run's devices may serve "imported", a capture's may not.
func TestGPUDeviceCountContradictingTheHardwareIsInvalid(t *testing.T) {
	dev := func(id, serving string) map[string]any {
		return map[string]any{"id": id, "id_from": "UUID", "serving": serving}
	}
	g := func(devs ...any) map[string]any {
		return map[string]any{"interval": "1s", "endpoints": []any{map[string]any{"url": "http://127.0.0.1:9400/metrics", "devices": devs}}, "scrapes": []any{}}
	}
	for _, tc := range []struct {
		name  string
		count any // nil: not stated
		g     map[string]any
		want  string
	}{
		{"two of two", 2, g(dev("GPU-1", "declared"), dev("GPU-2", "declared")), ""},
		{"count not stated", nil, g(dev("GPU-1", "declared")), ""},
		{"one of eight", 8, g(dev("GPU-1", "declared")), "list 1 device(s), but hardware.accelerator_count is 8"},
		{"three of two", 2, g(dev("GPU-1", "declared"), dev("GPU-2", "declared"), dev("GPU-3", "declared")), "list 3 device(s), but hardware.accelerator_count is 2"},
		{"imported serving in a capture", nil, g(dev("GPU-1", "imported")), `is "imported", but the run is not imported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["gpu_metrics"] = tc.g
				if tc.count != nil {
					hw, _ := m["hardware"].(map[string]any)
					if hw == nil {
						hw = map[string]any{}
						m["hardware"] = hw
					}
					hw["accelerator_count"] = tc.count
				}
			})
			err := schema.ValidateRunDir(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}
