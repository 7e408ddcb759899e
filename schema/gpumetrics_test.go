package schema_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func TestGPUMetricsIsCheckedAgainstTheLoadPlan(t *testing.T) {
	sum := strings.Repeat("a", 64)
	scrape := func(kv ...any) map[string]any {
		s := map[string]any{"endpoint": 0, "point": "c1", "repeat": 0, "when": "before", "from_ns": 1, "at_ns": 2, "file": "gpu-metrics/000001.prom", "sha256": sum}
		for i := 0; i < len(kv); i += 2 {
			s[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	device := map[string]any{"id": "GPU-1", "id_from": "UUID", "serving": "declared"}
	section := func(devices []any, scrapes ...any) map[string]any {
		if scrapes == nil {
			scrapes = []any{}
		}
		return map[string]any{"interval": "1s", "endpoints": []any{map[string]any{"url": "http://127.0.0.1:9400/metrics", "devices": devices}}, "scrapes": scrapes}
	}
	for _, tc := range []struct {
		name string
		g    map[string]any
		want string // "" valid, else part of the problem
	}{
		{"valid", section([]any{device}, scrape()), ""},
		{"a user-named counter", func() map[string]any {
			g := section([]any{device}, scrape())
			g["energy_counter"] = map[string]any{"name": "node_energy_joules_total", "unit": "J"}
			return g
		}(), ""},
		{"no endpoint", map[string]any{"interval": "1s", "endpoints": []any{}, "scrapes": []any{}}, "must list the scraped exporters"},
		{"an endpoint out of range", section([]any{device}, scrape("endpoint", 1)), "must index gpu_metrics.endpoints"},
		{"a server-metrics file name", section([]any{device}, scrape("file", "server-metrics/000001.prom")), "gpu_metrics.scrapes[0].file"},
		{"a file outside its folder", section([]any{device}, scrape("file", "gpu-metrics/../manifest.prom")), "gpu_metrics.scrapes[0].file"},
		{"sent after it arrived", section([]any{device}, scrape("from_ns", 3)), "from_ns"},
		{"an undeclared point", section([]any{device}, scrape("point", "zz")), "not a declared load point"},
		{"a file listed twice", section([]any{device}, scrape(), scrape("when", "after")), "listed twice"},
		{"a device listed twice", section([]any{device, device}), "\"GPU-1\" is listed twice"},
		{"simulator serving without --simulate", section([]any{map[string]any{"id": "GPU-1", "id_from": "UUID", "serving": "simulator"}}), "not against the in-process simulator"},
		{"an unknown serving", section([]any{map[string]any{"id": "GPU-1", "id_from": "UUID", "serving": "probably"}}), "serving"},
		{"a failed scrape with a file", section([]any{device}, scrape("error", "HTTP 500")), "a failed scrape has no file"},
		{"no from_ns", section([]any{device}, func() map[string]any { s := scrape(); delete(s, "from_ns"); return s }()), "from_ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) { m["gpu_metrics"] = tc.g })
			err := schema.ValidateRunDocuments(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid gpu_metrics rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}
