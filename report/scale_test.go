package report

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// manyPointsRun is a rate run of the given number of points, two ok
// requests each.
func manyPointsRun(points int) *memRun {
	ms := int64(1e6)
	m := &schema.Manifest{Schema: schema.ManifestSchemaV1, Client: schema.Client{Boundary: schema.BoundaryClientStreaming},
		Load: schema.Load{Mode: schema.ModeRate, Repeats: 1},
		SLO:  schema.SLO{TTFT: schema.Duration(200 * ms), TPOT: schema.Duration(50 * ms)}}
	var recs []*schema.Record
	for pi := range points {
		pt := "p" + strconv.Itoa(pi)
		m.Load.Points = append(m.Load.Points, schema.Point{Name: pt, Rate: 1})
		for i := range int64(2) {
			sch := int64(pi)*10_000*ms + i*1000*ms
			chunks := []int64{100 * ms, 140 * ms, 190 * ms}
			recs = append(recs, &schema.Record{ID: pt + "." + strconv.Itoa(int(i)), Point: pt, Phase: schema.PhaseMeasure, ScheduledNS: &sch,
				SentNS: sch, EndNS: sch + chunks[2] + ms, ChunksNS: chunks, OutputTokens: 3, InputTokens: 100, Status: schema.StatusOK})
		}
	}
	return &memRun{m: m, recs: recs}
}

// htmlAllocPerPoint returns the bytes HTML allocates per point of a run
// of n points.
func htmlAllocPerPoint(t *testing.T, n int) uint64 {
	res, err := replay.Replay(context.Background(), manyPointsRun(n), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	if err := HTML(io.Discard, res); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / uint64(n)
}

// The HTML report's work per point does not grow with the points: four
// times the points allocate about the same per point (each chart's table
// once compared every tick with every point: quadratic).
func TestHTMLReportIsLinearInPoints(t *testing.T) {
	small, large := htmlAllocPerPoint(t, 250), htmlAllocPerPoint(t, 1000)
	if large > small*3/2 {
		t.Errorf("HTML allocated %d B per point at 250 points, %d B at 1,000: grows with the points", small, large)
	}
}
