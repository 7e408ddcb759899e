package merge_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

func sim(t testing.TB) *httptest.Server {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed = 7
	cfg.TimeScale = 0.01
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func synced(context.Context) *schema.Clock {
	return &schema.Clock{Source: "adjtimex", Synced: true, MaxErrorNS: 250_000, EstErrorNS: 20_000, Status: "TIME_OK STA_PLL"}
}

func plans() map[string]capture.Plan {
	return map[string]capture.Plan{
		"rate": {
			Mode:   schema.ModeRate,
			Points: []schema.Point{{Name: "r1", Rate: 400, Arrival: schema.ArrivalPoisson, Requests: 23}, {Name: "r2", Rate: 300, Arrival: schema.ArrivalGamma, Burstiness: 0.5, Requests: 17}},
			Warmup: schema.Warmup{Requests: 5}, Repeats: 2, Seed: 11, InputTokens: 16, OutputTokens: 4,
		},
		"concurrency": {
			Mode:   schema.ModeConcurrency,
			Points: []schema.Point{{Name: "c5", Concurrency: 5, Requests: 21}, {Name: "c3", Concurrency: 3, Requests: 9}},
			Warmup: schema.Warmup{Requests: 3}, Repeats: 2, Seed: 5, InputTokens: 16, OutputTokens: 4,
		},
	}
}

func options(url string, p capture.Plan, dir string, shard *capture.ShardSpec) capture.Options {
	return capture.Options{
		Endpoint:  url,
		Request:   capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan:      p,
		OutDir:    dir,
		Probe:     true,
		Shard:     shard,
		ReadClock: synced,
	}
}

// mergedRun captures the "rate" plan as two shards into dir and merges
// them into dir/merged, which it returns.
func mergedRun(t *testing.T, dir string) string {
	t.Helper()
	dirs := captureShards(t, sim(t).URL, plans()["rate"], dir, 2)
	out := filepath.Join(dir, "merged")
	if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// captureShards runs the plan as n in-process shards into dir/shard-I.
func captureShards(t *testing.T, url string, p capture.Plan, dir string, n int) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		d := filepath.Join(dir, "shard-"+string(rune('0'+i)))
		if _, err := capture.Run(context.Background(), options(url, p, d, &capture.ShardSpec{Index: i, Count: n})); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

func records(t *testing.T, dir string) (*schema.Manifest, []*schema.Record) {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rd.OpenRecordReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	var out []*schema.Record
	for {
		r, err := rr.Next()
		if err == io.EOF {
			return rd.Manifest(), out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

type planned struct {
	item  int64
	sched int64 // scheduled_ns minus that of the shard's first request of the phase
	shard int64
}

func phaseKey(r *schema.Record) string { return r.Point + "/" + string(rune('0'+r.Repeat)) + r.Phase }

// schedule maps each request id to its item and (rate mode) its scheduled
// offset from the first request of its phase sent by the same shard.
func schedule(recs []*schema.Record) map[string]planned {
	first := map[string]int64{}
	for _, r := range recs {
		if r.ScheduledNS == nil {
			continue
		}
		k := phaseKey(r) + "/" + shardOf(r)
		if v, ok := first[k]; !ok || *r.ScheduledNS < v {
			first[k] = *r.ScheduledNS
		}
	}
	out := map[string]planned{}
	for _, r := range recs {
		p := planned{item: *r.Item, shard: -1}
		if r.Shard != nil {
			p.shard = *r.Shard
		}
		if r.ScheduledNS != nil {
			p.sched = *r.ScheduledNS - first[phaseKey(r)+"/"+shardOf(r)]
		}
		out[r.ID] = p
	}
	return out
}

func shardOf(r *schema.Record) string {
	if r.Shard == nil {
		return "-"
	}
	return string(rune('0' + *r.Shard))
}

// TestMergedShardsEqualSingleProcessSchedule: N shards of one seeded plan,
// merged, hold exactly the requests of a single process run of the same
// seed, each with the same item and (within every shard) the same schedule,
// and the merged run validates.
func TestMergedShardsEqualSingleProcessSchedule(t *testing.T) {
	ts := sim(t)
	for name, p := range plans() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			single := filepath.Join(dir, "single")
			if _, err := capture.Run(context.Background(), options(ts.URL, p, single, nil)); err != nil {
				t.Fatal(err)
			}
			const n = 3
			dirs := captureShards(t, ts.URL, p, dir, n)
			out := filepath.Join(dir, "merged")
			res, err := merge.Merge(context.Background(), dirs, out, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.ValidateRunDocuments(out, 20); err != nil {
				t.Fatalf("merged run invalid: %v", err)
			}
			_, srecs := records(t, single)
			m, mrecs := records(t, out)
			if m.Shards == nil || m.Shards.Count != n || m.Incomplete {
				t.Fatalf("merged manifest shards %+v incomplete %v", m.Shards, m.Incomplete)
			}
			if m.Shards.TimelineUncertaintyNS == nil || *m.Shards.TimelineUncertaintyNS != 500_000 {
				t.Errorf("timeline uncertainty %v, want 500000 (two bounds of 250 µs)", m.Shards.TimelineUncertaintyNS)
			}
			if res.Records != int64(len(srecs)) || len(mrecs) != len(srecs) {
				t.Fatalf("merged %d records (result %d), single process %d", len(mrecs), res.Records, len(srecs))
			}
			want, got := schedule(srecs), schedule(mrecs)
			for id, g := range got {
				w, ok := want[id]
				if !ok {
					t.Fatalf("merged request %s is not in the single-process run", id)
				}
				if g.item != w.item {
					t.Errorf("%s: item %d, single process %d", id, g.item, w.item)
				}
				if g.shard < 0 {
					t.Errorf("%s: no shard", id)
				}
			}
			// Within a shard, the schedule offsets equal the single
			// process's differences between the same requests.
			firstOf := map[string]string{}
			for _, r := range mrecs {
				if r.ScheduledNS == nil {
					continue
				}
				k := phaseKey(r) + "/" + shardOf(r)
				if got[r.ID].sched == 0 {
					firstOf[k] = r.ID
				}
			}
			for _, r := range mrecs {
				if r.ScheduledNS == nil {
					continue
				}
				base := firstOf[phaseKey(r)+"/"+shardOf(r)]
				exp := want[r.ID].sched - want[base].sched
				if d := got[r.ID].sched - exp; d > 1000 || d < -1000 {
					t.Errorf("%s: scheduled %d ns after its shard's first, single process says %d", r.ID, got[r.ID].sched, exp)
				}
			}
			if p.Mode == schema.ModeConcurrency && !strings.Contains(m.Notes["shards"], "merged from 3") {
				t.Errorf("notes %v", m.Notes)
			}
		})
	}
}

// TestMergeRefusesBadShardSets: a missing shard, an overlap, a different
// seed, a run that is no shard, and an incomplete shard are refused with
// the shard file named; --allow-incomplete writes a valid incomplete run
// with the missing requests counted.
func TestMergeRefusesBadShardSets(t *testing.T) {
	ts := sim(t)
	p := plans()["rate"]
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, p, dir, 3)
	other := p
	other.Seed = 12
	odd := filepath.Join(dir, "seed12")
	if _, err := capture.Run(context.Background(), options(ts.URL, other, odd, &capture.ShardSpec{Index: 2, Count: 3})); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if _, err := capture.Run(context.Background(), options(ts.URL, p, plain, nil)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dirs  []string
		want  []string
		shard int
	}{
		{"missing", dirs[:2], []string{"no run given for shard(s) 2 of 3", "--allow-incomplete"}, 0},
		{"overlap", []string{dirs[0], dirs[1], dirs[1]}, []string{dirs[1], "both shard 1 of 3", "disjoint"}, 0},
		{"other seed", []string{dirs[0], dirs[1], odd}, []string{odd, "differs from", "client.seed (12, not 11)"}, 0},
		{"not a shard", []string{dirs[0], plain}, []string{plain, "not a shard run"}, 0},
		{"count", []string{dirs[0]}, []string{dirs[0], "shard 0 of 3, but the merge is of 4"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := merge.Merge(context.Background(), tc.dirs, out, merge.Options{Shards: tc.shard})
			if !errors.Is(err, merge.ErrMerge) {
				t.Fatalf("err %v, want ErrMerge", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, serr := os.Stat(out); !os.IsNotExist(serr) {
				t.Errorf("refused merge left %s", out)
			}
		})
	}
	t.Run("allow incomplete", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		res, err := merge.Merge(context.Background(), dirs[:2], out, merge.Options{AllowIncomplete: true, Shards: 3})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := schema.CheckRunDir(context.Background(), out, 20, nil)
		if err != nil {
			t.Fatalf("incomplete merged run invalid: %v", err)
		}
		if !sum.Incomplete || len(res.Missing) != 1 || res.Missing[0] != 2 {
			t.Fatalf("summary %+v, missing %v", sum, res.Missing)
		}
		// Shard 2 of 3 owes every third measured request: 2 repeats ×
		// (23 and 17 requests) → 2 × (7 + 5) = 24.
		if sum.Missing != 24 {
			t.Errorf("missing %d, want 24", sum.Missing)
		}
	})
}

// rewrite copies run dir src to a new directory, passing the manifest and
// each record through the mutators (a record mutator returning false drops
// the record).
func rewrite(t *testing.T, src string, mm func(*schema.Manifest), rm func(*schema.Record) bool) string {
	t.Helper()
	m, recs := records(t, src)
	dst := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(dst, 0o755)
	if mm != nil {
		mm(m)
	}
	var buf []byte
	for _, r := range recs {
		if rm != nil && !rm(r) {
			continue
		}
		var err error
		if buf, err = schema.AppendRecord(buf, r); err != nil {
			t.Fatal(err)
		}
		buf = append(buf, '\n')
	}
	mb, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dst, schema.ManifestFile), mb, 0o644)
	os.WriteFile(filepath.Join(dst, schema.RecordsFile), buf, 0o644)
	wl, _ := os.ReadFile(filepath.Join(src, schema.WorkloadFile))
	os.WriteFile(filepath.Join(dst, schema.WorkloadFile), wl, 0o644)
	return dst
}

// TestValidateCatchesTamperedShardBookkeeping: a hostile publisher edits a
// merged run; every edit that drops or duplicates a shard's work, or
// misstates the bookkeeping, is invalid, and the one honest way to drop a
// shard (marked missing, the run incomplete) counts its requests missing.
func TestValidateCatchesTamperedShardBookkeeping(t *testing.T) {
	ts := sim(t)
	for name, p := range plans() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			dirs := captureShards(t, ts.URL, p, dir, 3)
			out := filepath.Join(dir, "merged")
			if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := schema.ValidateRunDocuments(out, 20); err != nil {
				t.Fatal(err)
			}
			drop2 := func(r *schema.Record) bool { return *r.Shard != 2 }
			for _, tc := range []struct {
				name string
				mm   func(*schema.Manifest)
				rm   func(*schema.Record) bool
				want string
			}{
				{"shard 2 dropped", nil, drop2, "missing"},
				{"shard 2 dropped, members count kept", func(m *schema.Manifest) { m.Incomplete, m.IncompleteReason = true, "x" }, drop2, "records"},
				{"record relabelled to another shard", nil, func(r *schema.Record) bool {
					if *r.Shard == 1 {
						v := int64(0)
						r.Shard = &v
					}
					return true
				}, "split rule"},
				{"shard field removed", nil, func(r *schema.Record) bool { r.Shard = nil; return true }, "names the shard that sent it"},
				{"present member marked missing", func(m *schema.Manifest) {
					mb := &m.Shards.Members[1]
					mb.Missing, mb.RunID, mb.Records = true, "", 0
					m.Incomplete, m.IncompleteReason = true, "x"
				}, nil, "marked missing"},
				{"offset moved", func(m *schema.Manifest) { m.Shards.Members[1].OffsetNS += 1000 }, nil, "offset_ns"},
				{"uncertainty understated", func(m *schema.Manifest) { u := int64(1); m.Shards.TimelineUncertaintyNS = &u }, nil, "timeline_uncertainty_ns"},
				{"missing shard, run complete", func(m *schema.Manifest) {
					mb := &m.Shards.Members[2]
					*mb = schema.ShardMember{Index: 2, Missing: true}
				}, drop2, "must be marked incomplete"},
				{"sharding removed", func(m *schema.Manifest) { m.Shards = nil }, nil, "declares no sharding"},
				{"unsigned pull claimed as signed by nobody", func(m *schema.Manifest) {
					m.Shards.Members[0].Pulled = &schema.ShardPull{Ref: "r-shard-0", BundleDigest: "sha256:" + strings.Repeat("a", 64), Authenticated: true, By: schema.ShardPullUnsigned}
				}, nil, "pulled.by"},
				{"unauthenticated pull with a signer", func(m *schema.Manifest) {
					m.Shards.Members[0].Pulled = &schema.ShardPull{Ref: "r-shard-0", BundleDigest: "sha256:" + strings.Repeat("a", 64), By: "key sha256:ab"}
				}, nil, "pulled.by"},
				{"pull without a bundle digest", func(m *schema.Manifest) {
					m.Shards.Members[0].Pulled = &schema.ShardPull{Ref: "r-shard-0", BundleDigest: "abc", By: schema.ShardPullUnsigned}
				}, nil, "pulled.bundle_digest"},
				{"a shard count lowered", func(m *schema.Manifest) {
					m.Shards.Count = 2
					m.Shards.Members = m.Shards.Members[:2]
				}, drop2, "shard"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					d := rewrite(t, out, tc.mm, tc.rm)
					err := schema.ValidateRunDocuments(d, 50)
					if err == nil {
						t.Fatal("tampered run validates")
					}
					if !strings.Contains(err.Error(), tc.want) {
						t.Errorf("error does not say %q:\n%v", tc.want, err)
					}
				})
			}
			// The honest way: shard 2 marked missing, the run incomplete.
			d := rewrite(t, out, func(m *schema.Manifest) {
				m.Shards.Members[2] = schema.ShardMember{Index: 2, Missing: true}
				u, ok, why := schema.TimelineUncertainty(m.Shards.Members)
				m.Shards.TimelineUncertaintyNS, m.Shards.UncertaintyReason = nil, why
				if ok {
					m.Shards.TimelineUncertaintyNS = &u
				}
				m.Incomplete, m.IncompleteReason = true, "shard 2 missing"
			}, drop2)
			sum, err := schema.CheckRunDir(context.Background(), d, 20, nil)
			if err != nil {
				t.Fatalf("honestly incomplete run invalid: %v", err)
			}
			if sum.Missing == 0 {
				t.Error("the missing shard's requests are not counted missing")
			}
		})
	}
}

// TestValidateChecksLateNS: a shard's late_ns must be its epoch minus the
// common start, and a start too far from the epoch to state it in int64
// nanoseconds (before 1678: it overflowed into a large "early") is
// invalid.
func TestValidateChecksLateNS(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	start := func(at string, late int64) func(*schema.Manifest) {
		return func(m *schema.Manifest) {
			if at == "" {
				at = time.Unix(0, m.EpochUnixNS-late).UTC().Format(time.RFC3339Nano)
			}
			m.Shard.StartAt, m.Shard.LateNS = at, late
		}
	}
	if err := schema.ValidateRunDocuments(rewrite(t, dirs[0], start("", 2500), nil), 20); err != nil {
		t.Fatalf("an honest late_ns is refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		mm   func(*schema.Manifest)
		want string
	}{
		{"start before 1678", start("1600-01-01T00:00:00Z", -4974597574966212424), "too far from epoch_unix_ns"},
		{"late_ns misstated", func(m *schema.Manifest) {
			start("", 2500)(m)
			m.Shard.LateNS = -1
		}, "epoch_unix_ns minus start_at is 2500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := schema.ValidateRunDocuments(rewrite(t, dirs[0], tc.mm, nil), 20)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestValidateDuplicateRecordInAMergedRun: a record written twice into a
// merged run is a duplicate id, never "-1 request(s) are missing".
func TestValidateDuplicateRecordInAMergedRun(t *testing.T) {
	out := mergedRun(t, t.TempDir())
	d := rewrite(t, out, func(m *schema.Manifest) { m.Shards.Members[1].Records++ }, nil)
	p := filepath.Join(d, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var dup string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(l, `"shard":1,`) {
			dup = l
			break
		}
	}
	os.WriteFile(p, append(b, dup...), 0o644)
	err = schema.ValidateRunDocuments(d, 50)
	if err == nil || !strings.Contains(err.Error(), "duplicate id") {
		t.Fatalf("err = %v, want a duplicate id", err)
	}
	if strings.Contains(err.Error(), "-1 request(s)") {
		t.Errorf("a duplicate is reported as -1 missing requests:\n%v", err)
	}
}

// TestIncompleteReasonStaysShort: merging one shard of 4096 with
// --allow-incomplete states the 4095 missing ones as ranges, not as 4095
// clauses (183 KB printed by every validate and replay).
func TestIncompleteReasonStaysShort(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	p := plans()["rate"]
	for i := range p.Points {
		p.Points[i].Requests = 4096 * 2
		p.Points[i].Rate = 1e6
	}
	p.Warmup, p.Repeats = schema.Warmup{}, 1
	d := filepath.Join(dir, "shard-3")
	if _, err := capture.Run(context.Background(), options(ts.URL, p, d, &capture.ShardSpec{Index: 3, Count: 4096})); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged")
	res, err := merge.Merge(context.Background(), []string{d}, out, merge.Options{AllowIncomplete: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "merged from shards: shards 0-2, 4-4095 of 4096 were not merged (missing)"
	if r := res.Manifest.IncompleteReason; r != want {
		t.Errorf("incomplete_reason (%d bytes) = %.200q, want %q", len(r), r, want)
	}
	if err := schema.ValidateRunDocuments(out, 20); err != nil {
		t.Fatal(err)
	}
}
