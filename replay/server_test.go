package replay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
	"github.com/benchseal/benchseal/simulator"
)

func captureWithScrapes(t *testing.T) string {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.05
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	o := capture.Options{
		Endpoint: ts.URL,
		Request:  capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan: capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 12}},
			Seed: 1, InputTokens: 16, OutputTokens: 8},
		OutDir:                filepath.Join(t.TempDir(), "run"),
		ServerMetrics:         capture.ServerMetricsAuto,
		ServerMetricsInterval: 5 * time.Millisecond,
	}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.OutDir
}

func replayDir(t *testing.T, dir string) *replay.Result {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestServerColumnFromStoredScrapesBesideTheClientColumns(t *testing.T) {
	res := replayDir(t, captureWithScrapes(t))
	p := res.Results[0]
	sc := p.Server
	if sc == nil || sc.Column == nil {
		t.Fatalf("no server column: %+v", sc)
	}
	var ttft *servermetrics.HistogramDelta
	for i := range sc.Column.Histograms {
		if sc.Column.Histograms[i].Role == servermetrics.RoleTTFT {
			ttft = &sc.Column.Histograms[i]
		}
	}
	if ttft == nil || ttft.Count != float64(p.Counts.OK) {
		t.Fatalf("server ttft %+v, want one observation per ok request (%d)", ttft, p.Counts.OK)
	}
	// The client's TTFT includes the server's: the difference is the
	// network, client and tokenization time, not negative beyond noise.
	if g := sc.ClientMinusServerTTFTNS; g == nil || *g < -1e6 {
		t.Errorf("client − server ttft mean %v ns", g)
	}
	// The client columns are the client's: the server column changes none
	// of them.
	if p.Dists["ttft_ns"].N != p.Counts.OK {
		t.Errorf("client ttft n %d", p.Dists["ttft_ns"].N)
	}
}

func TestServerColumnAbsentWithReasonForATamperedScrape(t *testing.T) {
	dir := captureWithScrapes(t)
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := rd.Manifest().ServerMetrics.Scrapes[0].File
	p := filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(f))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := replayDir(t, dir).Results[0].Server
	if sc == nil || sc.Column != nil || !strings.Contains(sc.Reason, "sha256 differs") {
		t.Errorf("tampered scrape: %+v", sc)
	}
}

func TestServerColumnFromAPackedBundle(t *testing.T) {
	dir := captureWithScrapes(t)
	out := filepath.Join(t.TempDir(), "run.oci")
	if _, err := artifact.Pack(context.Background(), dir, out, artifact.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := replay.Replay(context.Background(), b, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := res.Results[0].Server; sc == nil || sc.Column == nil {
		t.Errorf("bundle server column %+v", sc)
	}
}

func TestClientMinusServerTTFTOnlyOverTheSameRequests(t *testing.T) {
	dir := captureWithScrapes(t)
	// One more first token on the server than the client timed: a
	// request of another client, or one that failed after its first
	// token.
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Results[0].Server.ClientMinusServerTTFTNS == nil {
		t.Fatalf("same requests: no gap %+v", res.Results[0].Server)
	}
	m := rd.Manifest()
	last := &m.ServerMetrics.Scrapes[len(m.ServerMetrics.Scrapes)-1]
	b, err := os.ReadFile(filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(last.File)))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^(vllm:time_to_first_token_seconds_(?:count\{[^}]*\}|bucket\{[^}]*le="\+Inf"\})) (\d+)$`)
	hits := 0
	text := re.ReplaceAllStringFunc(string(b), func(line string) string {
		sub := re.FindStringSubmatch(line)
		v, _ := strconv.Atoi(sub[2])
		hits++
		return fmt.Sprintf("%s %d", sub[1], v+1)
	})
	if hits != 2 {
		t.Fatalf("%d TTFT count lines rewritten, want 2", hits)
	}
	rewriteScrape(t, dir, m, last, text)
	sc := replayDir(t, dir).Results[0].Server
	if sc.Column == nil || sc.ClientMinusServerTTFTNS != nil || !strings.Contains(sc.GapReason, "different requests") {
		t.Errorf("gap over different populations: %+v", sc)
	}
}

// rewriteScrape replaces a stored scrape and its digest in the manifest.
func rewriteScrape(t *testing.T, dir string, m *schema.Manifest, s *schema.Scrape, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(s.File)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(text))
	s.SHA256 = hex.EncodeToString(h[:])
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schema.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServerAttainmentFollowsTheReplaySLOExactAtAnEdgeBoundedBetween(t *testing.T) {
	dir := captureWithScrapes(t)
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// No SLO in the manifest: no server attainment either.
	if a := replayDir(t, dir).Results[0].Server.Attainment; len(a) != 0 {
		t.Fatalf("server attainment %+v without an SLO", a)
	}
	// A buyer's override: ttft at vLLM's 0.25 s edge, e2e between the
	// 0.5 and 0.8 s edges, tpot with no observations in range below it.
	ttft, e2e := int64(250*time.Millisecond), int64(700*time.Millisecond)
	res, err := replay.Replay(context.Background(), rd, replay.Options{SLO: &replay.SLOSpec{TTFTNS: &ttft, E2ENS: &e2e, Source: "flag"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Results[0].Server
	if len(sc.Attainment) != 2 {
		t.Fatalf("server attainment %+v, want ttft and e2e", sc.Attainment)
	}
	share := func(role string, edge float64) float64 {
		for _, h := range sc.Column.Histograms {
			if h.Role == role {
				for _, u := range h.Under {
					if u.Edge == edge {
						return u.Share
					}
				}
			}
		}
		t.Fatalf("no %s edge %v", role, edge)
		return 0
	}
	a := sc.Attainment[0]
	if a.Metric != "ttft" || a.Reason != "" || !a.A.Exact || a.A.Lo != share(servermetrics.RoleTTFT, 0.25) || a.Histogram != "vllm:time_to_first_token_seconds" {
		t.Errorf("ttft at an edge: %+v, want exactly the share under 0.25", a)
	}
	b := sc.Attainment[1]
	if b.Metric != "e2e" || b.Reason != "" || b.A.Exact || b.A.LoEdge == nil || *b.A.LoEdge != 0.5 || b.A.HiEdge == nil || *b.A.HiEdge != 0.8 ||
		b.A.Lo != share(servermetrics.RoleE2E, 0.5) || b.A.Hi != share(servermetrics.RoleE2E, 0.8) {
		t.Errorf("e2e between edges: %+v, want bounded by the shares under 0.5 and 0.8", b)
	}
	var out strings.Builder
	if err := report.Write(&out, report.FormatText, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server slo ttft ≤ 250.000 ms", "(the limit is a bucket edge; per limit, not joint)",
		"server slo e2e ≤ 700.000 ms", "(≤ 500 ms) and", "(≤ 800 ms)", "bounded only"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}
