package artifact_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// A vLLM scrape of an engine that has served nothing, started at Unix
// time 1000 s.
const freshScrape = `# TYPE vllm:request_success_total counter
vllm:request_success_total{model_name="m"} 0
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="m"} 0
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1000
`

// servedScrape is freshScrape after the test run's point c1 repeat 0
// (artifacttest.WriteRun): its 5 ok requests and their 160 prompt tokens
// counted.
var servedScrape = strings.NewReplacer("request_success_total{model_name=\"m\"} 0", "request_success_total{model_name=\"m\"} 5",
	"prompt_tokens_total{model_name=\"m\"} 0", "prompt_tokens_total{model_name=\"m\"} 160").Replace(freshScrape)

// ttftHistogram is a vLLM time-to-first-token histogram of n
// observations, under1 of them at most 1 s and the rest in (1, 2], summing
// to sum seconds.
func ttftHistogram(under1, n int, sum string) string {
	return strings.NewReplacer("U", strconv.Itoa(under1), "N", strconv.Itoa(n), "S", sum).Replace(`# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="1"} U
vllm:time_to_first_token_seconds_bucket{model_name="m",le="2"} N
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} N
vllm:time_to_first_token_seconds_sum{model_name="m"} S
vllm:time_to_first_token_seconds_count{model_name="m"} N
`)
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestStoredScrapesAreCheckedByPack: every scrape the manifest names
// (server_metrics.scrapes and a measured fresh start) must be present,
// of its sha256 and parsable, and a measured fresh start's counters and
// uptime must be what its scrape says; pack refuses the run otherwise
// (validate runs the same check, verify the same function on bundles).
func TestStoredScrapesAreCheckedByPack(t *testing.T) {
	const epoch = int64(2000e9) // the run starts 1000 s after the engine
	scrapes := func(sum1 string) map[string]any {
		return map[string]any{"url": "http://127.0.0.1:1/metrics", "interval": "1s", "scrapes": []any{
			map[string]any{"point": "c1", "repeat": 0, "when": "before", "at_ns": 0, "file": "server-metrics/a.prom", "sha256": sum1},
			map[string]any{"point": "c1", "repeat": 0, "when": "after", "at_ns": 70_000_000, "file": "server-metrics/b.prom", "sha256": digest(servedScrape)},
			map[string]any{"point": "c1", "repeat": 1, "when": "before", "at_ns": 70_000_001, "error": "connection refused"},
		}}
	}
	fresh := func(kv ...any) map[string]any {
		f := map[string]any{"fresh": true, "source": "measured", "scrape": "server-metrics/fresh.prom", "sha256": digest(freshScrape),
			"requests_before": 0, "prompt_tokens_before": 0, "uptime_ns": 999e9}
		for i := 0; i < len(kv); i += 2 {
			f[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"fresh": f}
	}
	files := map[string]string{"a.prom": freshScrape, "b.prom": servedScrape, "fresh.prom": freshScrape}
	// The point's 5 requests as the engine timed them: under 1 ms each
	// (as the records' ttft allows), or between 1 and 2 s each (far longer
	// than the client waited for its first chunk).
	histBefore, histFast, histSlow := freshScrape+ttftHistogram(0, 0, "0"), servedScrape+ttftHistogram(5, 5, "0.0005"), servedScrape+ttftHistogram(0, 5, "7.5")
	withHistograms := func(after string) func(m map[string]any) {
		return func(m map[string]any) {
			sm := scrapes(digest(histBefore))
			sm["scrapes"].([]any)[1].(map[string]any)["sha256"] = digest(after)
			m["server_metrics"] = sm
		}
	}
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]any)
		files map[string]string // replacing files (value "" removes it)
		want  string            // "" valid
	}{
		{"every scrape present and as stated", func(m map[string]any) {
			m["server_metrics"] = scrapes(digest(freshScrape))
			m["server_state"] = fresh()
		}, nil, ""},
		{"a listed scrape is missing", func(m map[string]any) { m["server_metrics"] = scrapes(digest(freshScrape)) }, map[string]string{"a.prom": ""},
			`"server_metrics.scrapes[0].file": the scrape attachments/server-metrics/a.prom: not in the run directory`},
		{"a listed scrape was altered", func(m map[string]any) { m["server_metrics"] = scrapes(digest(freshScrape)) }, map[string]string{"a.prom": freshScrape + "# x\n"},
			`"server_metrics.scrapes[0].file": the scrape attachments/server-metrics/a.prom: sha256`},
		{"a listed scrape does not parse", func(m map[string]any) { m["server_metrics"] = scrapes(digest("x{\n")) }, map[string]string{"a.prom": "x{\n"},
			"a.prom: server metrics: parse exposition"},
		{"the engine counted fewer requests than the records hold", func(m map[string]any) {
			sm := scrapes(digest(freshScrape))
			sm["scrapes"].([]any)[1].(map[string]any)["sha256"] = digest(freshScrape)
			m["server_metrics"] = sm
		}, map[string]string{"b.prom": freshScrape},
			`point "c1" repeat 0: the engine's vllm:request_success_total rose by 0 between the scrape before the point (server_metrics.scrapes[0]) and this scrape after it, but the records hold 5 ok requests`},
		{"the engine's ttft histogram allows the records' ttft", withHistograms(histFast), map[string]string{"a.prom": histBefore, "b.prom": histFast}, ""},
		{"the engine took longer to the first token than the client waited", withHistograms(histSlow), map[string]string{"a.prom": histBefore, "b.prom": histSlow},
			`point "c1" repeat 0: the engine's vllm:time_to_first_token_seconds observed 5 request(s) between the scrape before the point (server_metrics.scrapes[0]) and this scrape after it, at least 4 of them the point's own (one may not be counted yet), whose times inside the server sum to at least 5.500000 s by its sum and buckets; but the records' ttft`},
		{"the fresh scrape is missing", func(m map[string]any) { m["server_state"] = fresh() }, map[string]string{"fresh.prom": ""},
			`"server_state.fresh.scrape": the scrape attachments/server-metrics/fresh.prom: not in the run directory`},
		{"the fresh scrape's counters contradict the manifest (digest updated)", func(m map[string]any) {
			m["server_state"] = fresh("sha256", digest(strings.Replace(freshScrape, "} 0", "} 5", 1)))
		}, map[string]string{"fresh.prom": strings.Replace(freshScrape, "} 0", "} 5", 1)}, "counts 5 requests and 0 prompt tokens, the manifest says 0 and 0"},
		{"an uptime longer than the scrape allows", func(m map[string]any) { m["server_state"] = fresh("uptime_ns", 999999999999999) }, nil,
			`"server_state.fresh.uptime_ns": 999999999999999, but server-metrics/fresh.prom says the engine started 1000000000000 ns before the run did`},
		{"an uptime the scrape cannot give", func(m map[string]any) {
			m["server_state"] = fresh("sha256", digest(freshScrape[:strings.Index(freshScrape, "# TYPE process")]))
		}, map[string]string{"fresh.prom": freshScrape[:strings.Index(freshScrape, "# TYPE process")]}, "uptime is stated exactly when it is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{Generator: true})
			sd := filepath.Join(dir, schema.AttachmentsDir, schema.ServerMetricsDir)
			if err := os.MkdirAll(sd, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range files {
				if b, ok := tc.files[name]; ok {
					if body = b; body == "" {
						continue
					}
				}
				if err := os.WriteFile(filepath.Join(sd, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			artifacttest.EditJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["epoch_unix_ns"] = epoch
				tc.edit(m)
			})
			_, err := artifact.Pack(context.Background(), dir, filepath.Join(t.TempDir(), "b"), artifact.PackOptions{Created: artifacttest.Created})
			sum, _ := schema.CheckRunDir(context.Background(), dir, 50, nil)
			if probs := artifact.CheckRunDirServerEvidence(dir, sum); (len(probs) == 0) != (tc.want == "") {
				t.Errorf("CheckRunDirServerEvidence (validate's check): %v", probs)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid run rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}
