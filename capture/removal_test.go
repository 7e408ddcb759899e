package capture_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// rewriteRecords replaces the run's records.jsonl with keep's selection.
func rewriteRecords(t *testing.T, dir string, recs []*schema.Record, keep func(*schema.Record) bool) {
	t.Helper()
	var buf []byte
	var err error
	for _, r := range recs {
		if keep(r) {
			if buf, err = schema.AppendRecord(buf, r); err != nil {
				t.Fatal(err)
			}
			buf = append(buf, '\n')
		}
	}
	if err := os.WriteFile(filepath.Join(dir, schema.RecordsFile), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropSlowest removes the slowest fifth of the ok measured records of the
// first point's first repeat, and all its failures: the hard work a
// publisher would like to hide.
func dropSlowest(recs []*schema.Record, point string) func(*schema.Record) bool {
	var ok []*schema.Record
	for _, r := range recs {
		if r.Point == point && r.Repeat == 0 && r.Phase == schema.PhaseMeasure && r.Status == schema.StatusOK {
			ok = append(ok, r)
		}
	}
	slices.SortFunc(ok, func(a, b *schema.Record) int {
		return int(b.ChunksNS[len(b.ChunksNS)-1] - a.ChunksNS[len(a.ChunksNS)-1])
	})
	drop := map[*schema.Record]bool{}
	for _, r := range ok[:max(1, len(ok)/5)] {
		drop[r] = true
	}
	return func(r *schema.Record) bool {
		if r.Point == point && r.Repeat == 0 && r.Phase == schema.PhaseMeasure && r.Status != schema.StatusOK {
			return false
		}
		return !drop[r]
	}
}

func TestRemovedWorkMakesACapturedRunInvalid(t *testing.T) {
	ts := fastSim(t, func(c *simulator.Config) { c.ErrorRate = 0.1 })
	cases := map[string]struct {
		mode   string
		points []schema.Point
		want   string
	}{
		"closed loop, request count": {schema.ModeConcurrency, []schema.Point{{Concurrency: 4, Requests: 40}}, "request(s) are missing"},
		"closed loop, duration":      {schema.ModeConcurrency, []schema.Point{{Concurrency: 4, Duration: schema.Duration(300 * time.Millisecond)}}, "request numbers run to"},
		"open loop, request count":   {schema.ModeRate, []schema.Point{{Rate: 200, Arrival: schema.ArrivalPoisson, Requests: 40}}, "request(s) are missing"},
		"open loop, duration":        {schema.ModeRate, []schema.Point{{Rate: 200, Arrival: schema.ArrivalGamma, Burstiness: 0.5, Duration: schema.Duration(300 * time.Millisecond)}}, "regenerated from client.seed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := baseOptions(t, ts.URL)
			o.Plan.Mode, o.Plan.Points = tc.mode, tc.points
			o.SkipPreflight = true // one request in ten fails
			o.Plan.Warmup = schema.Warmup{Requests: 2}
			if _, err := capture.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			rf := readRun(t, o.OutDir) // valid as captured
			if rf.m.Load.Generator != schema.GeneratorBenchsealV1 {
				t.Fatalf("load.generator %q", rf.m.Load.Generator)
			}
			rewriteRecords(t, o.OutDir, rf.recs, dropSlowest(rf.recs, rf.m.Load.Points[0].Name))
			err := validateRunDir(o.OutDir)
			if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("validate after removing work: %v, want invalid with %q", err, tc.want)
			}

			// Marking it incomplete does not help: an
			// interruption leaves a contiguous prefix of request numbers,
			// never the slowest requests taken out of the middle.
			m := rf.m
			m.Incomplete, m.IncompleteReason = true, "interrupted"
			b, err := schema.MarshalDocument(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(o.OutDir, schema.ManifestFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := validateRunDir(o.OutDir); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "contiguous prefix") {
				t.Fatalf("incomplete run with work removed: %v, want invalid", err)
			}
		})
	}
}

// A request moved off the seeded schedule (or a fabricated one put in the
// place of a removed one) is found by regenerating the schedule.
func TestScheduleOffTheSeedIsInvalid(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.Plan.Mode = schema.ModeRate
	o.Plan.Points = []schema.Point{{Rate: 300, Arrival: schema.ArrivalPoisson, Requests: 30}}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	r := rf.recs[len(rf.recs)/2]
	s := *r.ScheduledNS - 2_000_000
	r.ScheduledNS = &s
	rewriteRecords(t, o.OutDir, rf.recs, func(*schema.Record) bool { return true })
	err := validateRunDir(o.OutDir)
	if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "off the schedule regenerated") {
		t.Fatalf("validate: %v", err)
	}
}

// A closed loop bounded by its duration has no request count: dropping its
// last requests keeps the request numbers a contiguous prefix, and a
// phase of a second or less used to pass whatever was cut. Each worker sends until its last request ends after the
// phase's first send + duration, so a captured run is valid as it is and
// invalid with its tail cut, however short the phase.
func TestDurationPhaseTailDroppedIsInvalid(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.Plan.Mode = schema.ModeConcurrency
	o.Plan.Points = []schema.Point{{Concurrency: 4, Duration: schema.Duration(300 * time.Millisecond)}}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if err := validateRunDir(o.OutDir); err != nil {
		t.Fatalf("captured run: %v", err)
	}
	rf := readRun(t, o.OutDir)
	measured := 0
	for _, r := range rf.recs {
		if r.Phase == schema.PhaseMeasure {
			measured++
		}
	}
	if measured < 8 {
		t.Fatalf("only %d measured requests", measured)
	}
	// Keep the first half of the request numbers: a contiguous prefix.
	keepBelow := measured / 2
	rewriteRecords(t, o.OutDir, rf.recs, func(r *schema.Record) bool {
		if r.Phase != schema.PhaseMeasure {
			return true
		}
		var k int
		fmt.Sscanf(r.ID[strings.LastIndex(r.ID, ".m")+2:], "%d", &k)
		return k < keepBelow
	})
	err := validateRunDir(o.OutDir)
	if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("validate after dropping the tail: %v, want invalid with \"cut short\"", err)
	}
}
