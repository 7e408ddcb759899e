package replay

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// Many points × repeats of one record each replay in memory proportional
// to the records, not a fixed block per distribution per cell (100 points
// × 100 repeats of one record each took ~1 GB when each distribution of
// each cell started a 65,536-sample block).
func TestManyCellsOfOneRecordReplayInMemoryPerRecord(t *testing.T) {
	const points, repeats = 100, 100
	var ps []schema.Point
	var recs []*schema.Record
	for i := range points {
		name := "p" + strconv.Itoa(i)
		ps = append(ps, schema.Point{Name: name, Rate: 1})
		for r := range repeats {
			rec := req(int64(i*repeats+r)*1e9, 3, 100, 200, 300)
			rec.ID, rec.Point, rec.Repeat = name+".r"+strconv.Itoa(r), name, r
			recs = append(recs, rec)
		}
	}
	m := manifest(ps...)
	m.Load.Repeats = repeats
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	res := mustReplay(t, &memRun{m: m, recs: recs}, Options{})
	runtime.ReadMemStats(&b)
	if len(res.Results) != points*repeats {
		t.Fatalf("%d results, want %d", len(res.Results), points*repeats)
	}
	if alloc := (b.TotalAlloc - a.TotalAlloc) / (points * repeats); alloc > 64<<10 {
		t.Errorf("replay allocated %d KiB per one-record cell", alloc>>10)
	}
}
