package schema_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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
		{"llama.cpp: every slot erased", map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "reset", "reset", slotReset(true, 200, 200))}}, ""},
		{"llama.cpp: ok although a slot's erase failed", map[string]any{"points": []any{entry("prefix_cache", "unknown", "reset", slotReset(true, 200, 501))}}, "every slot's erase answered 2xx"},
		{"llama.cpp erases mixed with another endpoint", map[string]any{"points": []any{entry("prefix_cache", "unknown", "reset",
			map[string]any{"at_ns": 0, "done_ns": 0, "ok": false, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 404}, map[string]any{"path": "/slots/0?action=erase", "status": 501}}})}}, "mixes"},
		{"a slot path of another shape", map[string]any{"points": []any{entry("prefix_cache", "unknown", "reset",
			map[string]any{"at_ns": 0, "done_ns": 0, "ok": false, "calls": []any{map[string]any{"path": "/slots/x?action=erase", "status": 501}}})}}, "does not match pattern"},
		{"cache use with more cached than prompt", map[string]any{"points": []any{entry("prefix_cache", "unknown", "cache", cacheUse(41, 40))}}, "first_cached ≤ first_prompt_tokens"},
		{"disabled, declared", map[string]any{"points": []any{entry("prefix_cache", "disabled", "prefix_cache_source", "declared")}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) { m["server_state"] = tc.state })
			err := schema.ValidateRunDocuments(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid server_state rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}

// TestServerStateIsCheckedAgainstTheRecordsCachedTokens: a point's stated
// cache use must be the sum of its records' server reports, and its
// state (whoever states it: the publisher, a reset, a measurement) must
// not contradict them.
func TestServerStateIsCheckedAgainstTheRecordsCachedTokens(t *testing.T) {
	entry := func(kv ...any) map[string]any {
		e := map[string]any{"point": "c1", "repeat": 0}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i].(string)] = kv[i+1]
		}
		return e
	}
	okReset := map[string]any{"at_ns": 0, "done_ns": 0, "ok": true, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 200}}}
	for _, tc := range []struct {
		name string
		// first is the cached tokens of c1 repeat 0's earliest-sent record
		// (-1: the records report none), rest those of its others.
		first, rest int
		// state builds server_state from the cache use the records sum to.
		state func(use map[string]any) map[string]any
		want  string
	}{
		{"measured warm: most of the first prompt cached", 1000, 3, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "warm", "prefix_cache_source", "measured", "cache", u)}}
		}, ""},
		{"measured empty: a few tokens cached", 1, 3, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "measured", "cache", u)}}
		}, ""},
		{"measured empty that the cache use contradicts", 1000, 0, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "measured", "cache", u)}}
		}, "at least half its prompt cached"},
		{"measured without its cache use", 1000, 0, func(map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "warm", "prefix_cache_source", "measured")}}
		}, "at least half its prompt cached"},
		{"a cache use the records do not sum to", 1000, 3, func(u map[string]any) map[string]any {
			u["cached_tokens"] = u["cached_tokens"].(int64) - 1
			return map[string]any{"points": []any{entry("prefix_cache", "warm", "prefix_cache_source", "measured", "cache", u)}}
		}, "but the records of point c1 repeat 0 sum to"},
		{"a cache use no record reports", -1, 0, func(map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "unknown", "cache", cacheUse(1, 40))}}
		}, "no ok record of point c1 repeat 0 carries"},
		{"records reporting a cache the state leaves out", 1, 0, func(map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "unknown")}}
		}, "is missing: the records of point c1 repeat 0 report cached prompt tokens"},
		{"declared empty, records warm", 1000, 0, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "declared", "cache", u)}}
		}, "empty (declared), but the engine's reports say warm"},
		{"empty after a reset, records warm", 1000, 0, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "empty", "prefix_cache_source", "reset", "reset", okReset, "cache", u)}}
		}, "empty (reset), but the engine's reports say warm"},
		{"declared disabled, records cached", 0, 2, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "disabled", "prefix_cache_source", "declared", "cache", u)}}
		}, "disabled (declared), but the engine reported"},
		{"declared disabled, nothing cached", 0, 0, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "disabled", "prefix_cache_source", "declared", "cache", u)}}
		}, ""},
		{"declared warm, records empty", 0, 0, func(u map[string]any) map[string]any {
			return map[string]any{"points": []any{entry("prefix_cache", "warm", "prefix_cache_source", "declared", "cache", u)}}
		}, "warm (declared), but the engine's reports say empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			use := setCached(t, dir, tc.first, tc.rest)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) { m["server_state"] = tc.state(use) })
			err := schema.ValidateRunDocuments(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid server_state rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}

func slotReset(ok bool, status ...int) map[string]any {
	var calls []any
	for i, st := range status {
		calls = append(calls, map[string]any{"path": "/slots/" + strconv.Itoa(i) + "?action=erase", "status": st})
	}
	return map[string]any{"at_ns": 0, "done_ns": 0, "ok": ok, "calls": calls}
}

// setCached writes server.cached_tokens into the ok records of c1 repeat
// 0: first (capped at its input tokens) on the earliest sent, rest on
// each other; none when first < 0. It returns the cache use they sum to,
// counted here by hand.
func setCached(t *testing.T, dir string, first, rest int) map[string]any {
	t.Helper()
	recs := readRecords(t, dir)
	earliest := -1
	for i, r := range recs {
		if r["point"] == "c1" && r["repeat"] == 0.0 && r["status"] == "ok" && (earliest < 0 || r["sent_ns"].(float64) < recs[earliest]["sent_ns"].(float64)) {
			earliest = i
		}
	}
	var n, prompt, cached, fc, fp int64
	var lines []string
	for i, r := range recs {
		if first >= 0 && r["point"] == "c1" && r["repeat"] == 0.0 && r["status"] == "ok" {
			in := int64(r["input_tokens"].(float64))
			c := min(int64(rest), in)
			if i == earliest {
				c = min(int64(first), in)
				fc, fp = c, in
			}
			r["server"] = map[string]any{"cached_tokens": c}
			n, prompt, cached = n+1, prompt+in, cached+c
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, schema.RecordsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"requests": n, "prompt_tokens": prompt, "cached_tokens": cached, "first_cached": fc, "first_prompt_tokens": fp}
}

func cacheUse(first, prompt int) map[string]any {
	return map[string]any{"requests": 1, "prompt_tokens": prompt, "cached_tokens": first, "first_cached": first, "first_prompt_tokens": prompt}
}

// TestResetMustFollowEveryEarlierRequest: an empty cache of source reset
// is refused when a request of an earlier point was still running after
// the reset started (it can refill the cache), and when the run cannot
// show it (no measured sent_ns/end_ns).
func TestResetMustFollowEveryEarlierRequest(t *testing.T) {
	dir := baseRun(t, false)
	recs := readRecords(t, dir)
	// The last record of c1 repeat 0 to end, and c1 repeat 1's first send.
	var last map[string]any
	first := int64(1) << 62
	for _, r := range recs {
		if r["point"] == "c1" && r["repeat"] == 0.0 && (last == nil || r["end_ns"].(float64) > last["end_ns"].(float64)) {
			last = r
		}
		if r["point"] == "c1" && r["repeat"] == 1.0 {
			first = min(first, int64(r["sent_ns"].(float64)))
		}
	}
	end := int64(last["end_ns"].(float64))
	if end > first {
		t.Fatalf("fixture: repeat 1 starts (%d) before repeat 0 ends (%d)", first, end)
	}
	reset := func(at int64) map[string]any {
		return map[string]any{"points": []any{map[string]any{"point": "c1", "repeat": 1, "prefix_cache": "empty", "prefix_cache_source": "reset",
			"reset": map[string]any{"at_ns": at, "done_ns": at, "ok": true, "calls": []any{map[string]any{"path": "/reset_prefix_cache", "status": 200}}}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"a reset after the previous point ended", func(m map[string]any) { m["server_state"] = reset(end) }, ""},
		{"a reset while the previous point's last request ran", func(m map[string]any) { m["server_state"] = reset(end - 1) },
			"was still in flight until " + strconv.FormatInt(end, 10)},
		{"a reset in a run without measured end times", func(m map[string]any) {
			m["server_state"] = reset(end)
			m["provenance"] = map[string]any{"fields": map[string]any{"end_ns": map[string]any{"status": "absent", "how": "not measured"}}}
		}, "needs measured sent_ns and end_ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "run")
			if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			editJSON(t, filepath.Join(d, schema.ManifestFile), tc.edit)
			err := schema.ValidateRunDocuments(d, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid reset rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}

func readRecords(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, schema.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
