package merge_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// setStart gives a shard run the common start at ("": none) and the
// late_ns validate requires with it.
func setStart(at string) func(*schema.Manifest) {
	return func(m *schema.Manifest) {
		m.Shard.StartAt, m.Shard.LateNS = at, 0
		if at != "" {
			t, _ := time.Parse(time.RFC3339, at)
			m.Shard.LateNS, _ = schema.ShardLateNS(m.EpochUnixNS, t)
		}
	}
}

// TestMergeRefusesShardsOfAnotherStart: shards whose common start
// (shard.start_at) differs, or of which one had none, are not one run:
// merge refuses them naming both directories.
func TestMergeRefusesShardsOfAnotherStart(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	for name, c := range map[string]struct{ a, b string }{
		"different starts": {"2026-11-30T15:00:00Z", "2026-11-30T15:00:02Z"},
		"one without":      {"", "2026-11-30T15:00:02Z"},
	} {
		t.Run(name, func(t *testing.T) {
			a := rewrite(t, dirs[0], setStart(c.a), nil)
			b := rewrite(t, dirs[1], setStart(c.b), nil)
			_, err := merge.Merge(context.Background(), []string{a, b}, filepath.Join(t.TempDir(), "m"), merge.Options{})
			if err == nil || !errors.Is(err, merge.ErrMerge) || !strings.Contains(err.Error(), "start") || !strings.Contains(err.Error(), b) {
				t.Fatalf("merge of shards of different starts: %v", err)
			}
		})
	}
	a := rewrite(t, dirs[0], setStart("2026-11-30T15:00:00Z"), nil)
	b := rewrite(t, dirs[1], setStart("2026-11-30T15:00:00Z"), nil)
	if _, err := merge.Merge(context.Background(), []string{a, b}, filepath.Join(t.TempDir(), "m"), merge.Options{}); err != nil {
		t.Fatalf("shards of one start refused: %v", err)
	}
}

// TestReplayFlagsPhasesOverlappingAcrossShards: when one shard's measured
// phase ran while another shard ran another point or phase on the merged
// timeline, replay flags that point (phases_overlap, a note naming the
// shards) and verify's claims on it carry the flag; shards that did not
// overlap are not flagged.
func TestReplayFlagsPhasesOverlappingAcrossShards(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2) // one after the other: no overlap
	out := filepath.Join(dir, "merged")
	if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	replayDir := func(d string) *replay.Result {
		t.Helper()
		rd, err := schema.OpenRunDir(d)
		if err != nil {
			t.Fatal(err)
		}
		res, err := replay.Replay(context.Background(), rd, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, p := range replayDir(out).Results {
		if len(p.PhasesOverlap) > 0 {
			t.Errorf("sequential shards: point %s/%d flagged %v", p.Point, p.Repeat, p.PhasesOverlap)
		}
	}
	// Move shard 1 so that it starts when shard 0 starts point r1
	// repeat 1: shard 1's repeat 0 then runs during shard 0's repeat 1.
	_, recs := records(t, out)
	var base1, t0 int64 = -1, -1
	for _, r := range recs {
		if *r.Shard == 1 && (base1 < 0 || r.SentNS < base1) {
			base1 = r.SentNS
		}
		if *r.Shard == 0 && r.Point == "r1" && r.Repeat == 1 && (t0 < 0 || r.SentNS < t0) {
			t0 = r.SentNS
		}
	}
	moved := rewrite(t, out, nil, func(r *schema.Record) bool {
		if *r.Shard == 1 {
			d := t0 - base1
			r.SentNS += d
			r.EndNS += d
			if r.ScheduledNS != nil {
				*r.ScheduledNS += d
			}
		}
		return true
	})
	res := replayDir(moved)
	p := res.Point("r1", 1)
	if p == nil || len(p.PhasesOverlap) == 0 {
		t.Fatalf("point r1 repeat 1 not flagged: %+v", p)
	}
	// Which phases of shard 1 fall into the window depends on the
	// capture's timing; its repeat 0 always does, at any place in the list.
	if !slices.ContainsFunc(p.PhasesOverlap, func(o string) bool {
		return strings.Contains(o, "shard 0 measured it") && strings.Contains(o, "shard 1 ran point r1 repeat 0")
	}) {
		t.Errorf("no overlap %q names shard 0's measurement and shard 1's point r1 repeat 0", p.PhasesOverlap)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "phases_overlap: point r1 repeat 1:") }) {
		t.Errorf("no phases_overlap note: %q", res.Notes)
	}
}

// TestShardEpochTheRecordsContradictIsInvalid: two closed-loop shards
// captured one after the other, the second 12 s after the first (its
// records and its offset_ns moved together: an honest-looking merge),
// merge with a shards_apart note. Declaring shard 1's epoch to be shard
// 0's (offset_ns 0) while its records stay where they were, or moving its
// epoch past its first records, left a valid run whose shard placement
// the records deny; the run is now invalid, naming the member's
// offset_ns. (A shard whose epoch was edited before merge, its records
// placed by it, is not caught: nothing in the bundle but the shards'
// epochs places them.)
func TestShardEpochTheRecordsContradictIsInvalid(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["concurrency"], dir, 2)
	out := filepath.Join(dir, "merged")
	if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	later := int64(12_000_000_000)
	shift := func(d int64) func(*schema.Record) bool {
		return func(r *schema.Record) bool {
			if *r.Shard == 1 {
				r.SentNS += d
				r.EndNS += d
				if r.ScheduledNS != nil {
					*r.ScheduledNS += d
				}
			}
			return true
		}
	}
	epoch := func(d int64) func(*schema.Manifest) {
		return func(m *schema.Manifest) {
			m.Shards.Members[1].EpochUnixNS += d
			m.Shards.Members[1].OffsetNS += d
		}
	}
	honest := rewrite(t, out, epoch(later), shift(later))
	if err := schema.ValidateRunDocuments(honest, 20); err != nil {
		t.Fatalf("shard 1 12 s later: %v", err)
	}
	rd, err := schema.OpenRunDir(honest)
	if err != nil {
		t.Fatal(err)
	}
	if notes, err := replay.ShardsApart(context.Background(), rd); err != nil || len(notes) == 0 {
		t.Fatalf("shards captured one after the other: notes %q, %v", notes, err)
	}
	m, _ := records(t, honest)
	off := m.Shards.Members[1].OffsetNS
	for name, c := range map[string]struct {
		d    int64
		want string
	}{
		"epoch onto shard 0's":        {-off, "after it"},
		"epoch after its first sends": {5_000_000_000, "before it"},
	} {
		t.Run(name, func(t *testing.T) {
			err := schema.ValidateRunDocuments(rewrite(t, honest, epoch(c.d), nil), 20)
			if err == nil || !strings.Contains(err.Error(), "shards.members[1].offset_ns") || !strings.Contains(err.Error(), "contradict the shard's declared epoch") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("shard 1's epoch moved by %d ns: %v", c.d, err)
			}
		})
	}
}
