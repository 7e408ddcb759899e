package schema_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func TestServerStateIsCheckedAgainstItselfAndTheRecords(t *testing.T) {
	okReset := map[string]any{"at_ns": 0, "done_ns": 0, "ok": true, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 200}}}
	failed := map[string]any{"at_ns": 0, "done_ns": 0, "ok": false, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 404}}}
	entry := func(kv ...any) map[string]any {
		e := map[string]any{"point": "c1", "repeat": 0}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i].(string)] = kv[i+1]
		}
		return e
	}
	for _, tc := range []struct {
		name  string
		state map[string]any
		want  string // "" valid, else part of the problem
	}{
		{"empty after a recorded successful reset", map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "reset", "reset", okReset)}}, ""},
		{"declared empty without a reset is valid (verify calls it unverified)", map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "declared")}}, ""},
		{"empty claimed from a failed reset", map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "reset", "reset", failed)}}, "recorded successful reset"},
		{"empty with no source", map[string]any{"points": []any{entry("prefix_cache", "empty")}}, "prefix_cache_source"},
		{"ok that the calls contradict", map[string]any{"points": []any{entry("prefix_cache", "unknown", "reset",
			map[string]any{"at_ns": 0, "done_ns": 0, "ok": true, "calls": []any{map[string]any{"path": "/flush_cache", "status": 500}}})}}, "the calls say false"},
		{"a reset ending after the point's first request", map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "reset", "reset",
			map[string]any{"at_ns": 0, "done_ns": int64(1) << 60, "ok": true, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 204}}})}}, "after the point's first request"},
		{"a warmup shorter than its records", map[string]any{"points": []any{entry("prefix_cache", "unknown", "warmup_ns", 0)}}, "shorter than the span of its warmup records"},
		{"an undeclared point", map[string]any{"points": []any{map[string]any{"point": "zz", "repeat": 0, "prefix_cache": "unknown"}}}, "not a declared load point"},
		{"a point listed twice", map[string]any{"points": []any{entry("prefix_cache", "unknown"), entry("prefix_cache", "unknown")}}, "listed twice"},
		{"an unknown state", map[string]any{"points": []any{entry("prefix_cache", "lukewarm")}}, "prefix_cache"},
		{"measured fresh without its scrape", map[string]any{"fresh": map[string]any{"fresh": true, "source": "measured"}}, "server_state.fresh"},
		{"measured fresh the counts contradict", map[string]any{"fresh": map[string]any{"fresh": true, "source": "measured",
			"scrape": "server-metrics/fresh.prom", "sha256": strings.Repeat("a", 64), "requests_before": 3, "prompt_tokens_before": 10}}, "requests_before 3"},
		{"declared fresh carrying a measurement", map[string]any{"fresh": map[string]any{"fresh": true, "source": "declared", "requests_before": 0}}, "carries no measurement"},
		{"declared fresh", map[string]any{"fresh": map[string]any{"fresh": true, "source": "declared"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) { m["server_state"] = tc.state })
			err := schema.ValidateRunDir(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid server_state rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}
