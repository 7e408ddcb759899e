package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// A scrape of an engine that had served 5 requests (vLLM names).
const servedScrape = `# TYPE vllm:request_success_total counter
vllm:request_success_total{finished_reason="stop",model_name="m"} 5
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="m"} 640
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 0
`

// stateBundle packs artifacttest's run with manifest.server_state set to
// state and, when scrape is not empty, that scrape stored as
// attachments/server-metrics/fresh.prom.
func stateBundle(t *testing.T, state map[string]any, scrape string) string {
	t.Helper()
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{Generator: true})
	if scrape != "" {
		p := filepath.Join(run, schema.AttachmentsDir, "server-metrics", "fresh.prom")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(scrape), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mp := filepath.Join(run, schema.ManifestFile)
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["server_state"] = state
	b, _ = json.Marshal(m)
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b")
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	return out
}

// An empty cache of source reset without a recorded successful reset is
// refused by schema validation (schema TestServerStateIsCheckedAgainstItselfAndTheRecords),
// which pack runs and verify's schema check runs again. A state that
// pack refuses (artifact TestStoredScrapesAreCheckedByPack) is crafted
// into a packed bundle, as a hostile publisher would.
func TestServerStateClaimsNeedTheirEvidence(t *testing.T) {
	sum := sha256.Sum256([]byte(servedScrape))
	digest := hex.EncodeToString(sum[:])
	measured := func(fresh bool, reqs, toks float64) map[string]any {
		return map[string]any{"fresh": map[string]any{"fresh": fresh, "source": "measured", "scrape": "server-metrics/fresh.prom",
			"sha256": digest, "requests_before": reqs, "prompt_tokens_before": toks}}
	}
	for _, tc := range []struct {
		name     string
		state    map[string]any
		scrape   string
		fail     string // "" verified
		warning  string
		noWarned bool
	}{
		{name: "measured not fresh, as the scrape says", state: measured(false, 5, 640), scrape: servedScrape, noWarned: true},
		{name: "a fresh start the stored scrape contradicts", state: measured(true, 0, 0), scrape: servedScrape,
			fail: "counts 5 requests and 640 prompt tokens, the manifest says 0 and 0"},
		{name: "a measured fresh start without its scrape", state: measured(false, 5, 640), fail: `"server_state.fresh.scrape": the scrape attachments/server-metrics/fresh.prom: sha256`},
		{name: "a declared fresh start is verified but unverified", state: map[string]any{"fresh": map[string]any{"fresh": true, "source": "declared"}},
			warning: "UNVERIFIED server state: server_state.fresh true is declared"},
		{name: "a declared empty cache is unverified", state: map[string]any{"points": []any{map[string]any{"point": "c1", "repeat": 0,
			"prefix_cache": "empty", "prefix_cache_source": "declared"}}}, warning: "prefix cache empty is declared by the publisher, not backed by a recorded successful reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p string
			if tc.fail == "" {
				p = stateBundle(t, tc.state, tc.scrape)
			} else {
				p = stateBundle(t, measured(false, 5, 640), servedScrape)
				rewriteManifestLayer(t, p, func(m map[string]any) { m["server_state"] = tc.state })
				if tc.scrape == "" {
					b, err := artifact.Open(p)
					if err != nil {
						t.Fatal(err)
					}
					i := len(b.Layers()) - 1
					if l := b.Layers()[i]; l.Title != "attachments/server-metrics/fresh.prom" {
						t.Fatalf("last layer is %s", l.Title)
					}
					b.Close()
					artifacttest.ReplaceLayer(t, p, i, []byte(servedScrape+"# altered\n"), nil)
				}
			}
			res, err := newVerifier(t, nil).Verify(context.Background(), p, verify.Policy{AllowUnsignedUnsafe: true})
			if tc.fail != "" {
				if err == nil || res.Verified || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("verified %v err %v, want a rejection saying %q", res != nil && res.Verified, err, tc.fail)
				}
				return
			}
			if err != nil || !res.Verified {
				t.Fatalf("not verified: %v", err)
			}
			w := strings.Join(res.Warnings, "\n")
			if tc.warning != "" && !strings.Contains(w, tc.warning) {
				t.Errorf("warnings lack %q:\n%s", tc.warning, w)
			}
			if tc.noWarned && strings.Contains(w, "server state") {
				t.Errorf("a measured state is warned about:\n%s", w)
			}
		})
	}
}

// TestStoredScrapeMissingFromTheBundleIsRejected: a scrape
// manifest.server_metrics names that the bundle lacks is a rejection,
// not a silently absent server column.
func TestStoredScrapeMissingFromTheBundleIsRejected(t *testing.T) {
	sum := sha256.Sum256([]byte(servedScrape))
	digest := hex.EncodeToString(sum[:])
	p := stateBundle(t, map[string]any{"fresh": map[string]any{"fresh": false, "source": "measured", "scrape": "server-metrics/fresh.prom",
		"sha256": digest, "requests_before": 5, "prompt_tokens_before": 640}}, servedScrape)
	rewriteManifestLayer(t, p, func(m map[string]any) {
		m["server_metrics"] = map[string]any{"url": "http://127.0.0.1:1/metrics", "interval": "1s", "scrapes": []any{
			map[string]any{"point": "c1", "repeat": 0, "when": "before", "at_ns": 0, "file": "server-metrics/fresh.prom", "sha256": digest},
			map[string]any{"point": "c1", "repeat": 0, "when": "after", "at_ns": 1, "file": "server-metrics/gone.prom", "sha256": digest},
		}}
	})
	res, err := newVerifier(t, nil).Verify(context.Background(), p, verify.Policy{AllowUnsignedUnsafe: true})
	want := `"server_metrics.scrapes[1].file": the scrape attachments/server-metrics/gone.prom: attachment server-metrics/gone.prom: not in the bundle`
	if err == nil || res.Verified || !strings.Contains(err.Error(), want) {
		t.Fatalf("verified %v err %v, want a rejection saying %q", res != nil && res.Verified, err, want)
	}
}
