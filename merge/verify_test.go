package merge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

func verifyUnsigned(t *testing.T, bundle string) *verify.Result {
	t.Helper()
	v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := v.Verify(context.Background(), bundle, verify.Policy{AllowUnsignedUnsafe: true})
	if res == nil {
		t.Fatal("no result")
	}
	return res
}

func failures(res *verify.Result) string {
	var b strings.Builder
	for _, c := range res.Checks {
		if c.Status == verify.StatusFailed {
			fmt.Fprintf(&b, "%s: %s %s\n", c.Name, c.Reason, strings.Join(c.Problems, "; "))
		}
	}
	return b.String()
}

// TestMergedRunPacksAndVerifies: the README flow merge → pack → verify of
// an honest sharded run is VERIFIED. It was REJECTED when verify's record
// stream left record.shard aliased to the reader's buffer (every record of
// a layer then carried the shard of the last one decoded).
func TestMergedRunPacksAndVerifies(t *testing.T) {
	dir := t.TempDir()
	out := mergedRun(t, dir)
	b := filepath.Join(dir, "merged.oci")
	if _, err := artifact.Pack(context.Background(), out, b, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	if res := verifyUnsigned(t, b); !res.Verified {
		t.Fatalf("honest merged bundle not verified:\n%s", failures(res))
	}
}

// TestVerifyRejectsAWrongShardOnAnEarlyRecord: a shard bundle whose first
// record (not the last, whose value an aliasing reader would show for
// every record) names another shard is rejected, naming the line and the
// field.
func TestVerifyRejectsAWrongShardOnAnEarlyRecord(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	p := filepath.Join(dir, "shard-0.oci")
	if _, err := artifact.Pack(context.Background(), dirs[0], p, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	if res := verifyUnsigned(t, p); !res.Verified {
		t.Fatalf("honest shard bundle not verified:\n%s", failures(res))
	}
	bd, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	idx, title := -1, ""
	for i, l := range bd.Layers() {
		if l.Kind == artifact.KindRecords && l.Records >= 2 {
			idx, title = i, l.Title
			break
		}
	}
	if idx < 0 {
		t.Fatal("no records layer with two records")
	}
	l := bd.Layers()[idx]
	bd.Close()
	blob, err := os.ReadFile(filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded()))
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	raw, err := dec.DecodeAll(blob, nil)
	dec.Close()
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(raw, []byte("\n"))
	if !bytes.Contains(first, []byte(`"shard":0`)) {
		t.Fatalf("first record has no shard 0: %s", first)
	}
	edited := append(append(bytes.Replace(first, []byte(`"shard":0`), []byte(`"shard":1`), 1), '\n'), rest...)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	z := enc.EncodeAll(edited, nil)
	enc.Close()
	artifacttest.ReplaceLayer(t, p, idx, z, map[string]string{
		artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(edited)),
		artifact.AnnotationUncompressedSize:   fmt.Sprint(len(edited)),
	})
	res := verifyUnsigned(t, p)
	if res.Verified {
		t.Fatal("VERIFIED a shard bundle whose first record names another shard")
	}
	f := failures(res)
	if !strings.Contains(f, title+":1:") || !strings.Contains(f, `field "shard"`) {
		t.Errorf("failure does not name %s:1 and field \"shard\":\n%s", title, f)
	}
}

// TestVerifyLeavesShardPlacementClaimsUnverified: in a merged run, claims
// that rest on where the shards' timelines sit relative to each other
// (window, throughputs, goodput, overload) depend on clocks the shards
// declare themselves: verify lists them UNVERIFIED with that reason even
// when the records agree. Per-request latencies do not depend on the
// placement, but are the point's latencies only if the shards ran at once
// (two c4 shards measured in turn passed as c8): UNVERIFIED too. Counts
// are MATCHED, and a claim the records contradict is still MISMATCHED.
func TestVerifyLeavesShardPlacementClaimsUnverified(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	out := filepath.Join(dir, "merged")
	if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	rd, err := schema.OpenRunDir(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	claims := res.Claims(nil, replay.DefaultClaimTolerance)
	pack := func(name string, edit func(*schema.Claims)) string {
		t.Helper()
		c := *claims
		c.Points = nil
		for _, pc := range claims.Points {
			pc.Metrics = append([]schema.Claim(nil), pc.Metrics...)
			c.Points = append(c.Points, pc)
		}
		if edit != nil {
			edit(&c)
		}
		b, err := schema.MarshalDocument(&c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, schema.ClaimsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if _, err := artifact.Pack(context.Background(), out, p, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vr := verifyUnsigned(t, pack("honest.oci", nil))
	if !vr.Verified {
		t.Fatalf("honest merged bundle with claims not verified:\n%s", failures(vr))
	}
	claimed := map[string]bool{}
	for _, pc := range claims.Points {
		for _, c := range pc.Metrics {
			claimed[c.Metric] = true
		}
	}
	unverified := map[string]string{}
	for _, c := range vr.Unverified {
		unverified[c.Metric] = c.Reason
	}
	if !claimed["request_throughput"] || !claimed["window_ns"] {
		t.Fatal("window_ns and request_throughput not claimed")
	}
	for _, m := range []string{"window_ns", "request_throughput", "output_token_throughput", "total_token_throughput", "overload.overloaded", "summary.request_throughput.median"} {
		if r, ok := unverified[m]; claimed[m] && (!ok || !strings.Contains(r, "declared by the shards")) {
			t.Errorf("%s: unverified %v (%q), want UNVERIFIED because the clocks are declared by the shards", m, ok, r)
		}
	}
	// Latencies do not depend on the placement, but describe the load the
	// shards offered together only if they ran at once, which only their
	// declared clocks say; counts depend on neither.
	for _, m := range []string{"ttft_ns.p50", "e2e_ns.p99", "itl_ns.p50"} {
		if r, ok := unverified[m]; !claimed[m] || !ok || !strings.Contains(r, "holds only if they ran at once") {
			t.Errorf("%s: claimed %v, unverified %v (%q), want UNVERIFIED because only the shards' clocks say they overlapped", m, claimed[m], ok, r)
		}
	}
	// The records' statuses fix counts.ok and the rest as they fix
	// counts.sent; no scrape could add to them, since merge refuses shards
	// holding scrapes (before, all but counts.sent were UNVERIFIED for
	// "no stored server-metrics scrape").
	for _, m := range []string{"counts.sent", "counts.ok", "counts.error", "counts.timeout", "counts.cancelled"} {
		if r, ok := unverified[m]; !claimed[m] || ok {
			t.Errorf("%s: claimed %v, UNVERIFIED %v (%s), but it depends on no placement", m, claimed[m], ok, r)
		}
	}
	vr = verifyUnsigned(t, pack("inflated.oci", func(c *schema.Claims) {
		for i := range c.Points[0].Metrics {
			if c.Points[0].Metrics[i].Metric == "request_throughput" {
				c.Points[0].Metrics[i].Value *= 1.8
			}
		}
	}))
	if vr.Verified {
		t.Fatal("VERIFIED a merged bundle whose request_throughput claim the records contradict")
	}
}
