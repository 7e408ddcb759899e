package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// traceRun returns a trace replay's manifest, its workload items' bytes
// and records that follow them: three requests at trace times 0, 40 ms
// and 40 ms, replayed at speedup 4.
func traceRun() (*Manifest, string, []*Record) {
	seed := int64(1)
	m := &Manifest{Client: Client{Seed: &seed},
		Workload: Workload{Trace: &TraceSource{Format: TraceMooncake, SHA256: strings.Repeat("a", 64), Speedup: 4, Requests: 3, Stored: TraceAttachment}},
		Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1,
			Points: []Point{{Name: "trace", Rate: 75, Arrival: ArrivalTrace, Requests: 3}}}}
	items := `{"prompt":"a b","input_tokens":2,"output_tokens":1,"trace_ns":0}
{"prompt":"c","input_tokens":1,"output_tokens":1,"trace_ns":40000000}
{"prompt":"d","input_tokens":1,"output_tokens":1,"trace_ns":40000000}
`
	var recs []*Record
	for k, off := range []int64{0, 10e6, 10e6} {
		s, item := 5e6+off, int64(k)
		recs = append(recs, &Record{ID: "trace.r0.m" + string(rune('0'+k)), Point: "trace", Phase: PhaseMeasure, Item: &item,
			Status: StatusOK, ScheduledNS: &s, SentNS: s + 100, EndNS: s + 1000, ChunksNS: []int64{500}, InputTokens: 2, OutputTokens: 1})
	}
	return m, items, recs
}

func traceProblems(t *testing.T, m *Manifest, items string, recs []*Record) string {
	t.Helper()
	c := NewRecordChecker(m)
	if items != "" {
		w := NewWorkloadItems()
		w.Write([]byte(items))
		w.Close()
		c.SetWorkload(w)
	}
	var all []string
	for i, rec := range recs {
		for _, p := range c.Check(RecordsFile, i+1, rec) {
			all = append(all, p.String())
		}
	}
	for _, p := range c.Finish() {
		all = append(all, p.String())
	}
	return strings.Join(all, "\n")
}

// A trace replay's schedule is regenerated from the workload items'
// trace_ns ÷ speedup: records that follow it pass; a request moved, one
// sent from another item, and items without trace_ns are problems.
func TestTraceReplayScheduleIsRegeneratedFromTheWorkload(t *testing.T) {
	m, items, recs := traceRun()
	if got := traceProblems(t, m, items, recs); got != "" {
		t.Fatalf("a replay that follows its trace has problems:\n%s", got)
	}
	for _, tc := range []struct {
		name  string
		edit  func(m *Manifest, items *string, recs []*Record)
		wants string
	}{
		{"moved", func(_ *Manifest, _ *string, recs []*Record) { *recs[2].ScheduledNS -= 2e6 },
			"1 request(s) off the schedule regenerated from the replayed trace (workload.jsonl trace_ns ÷ workload.trace.speedup) (load.generator \"benchseal/v1\"), e.g. request 2 is scheduled 8000000 ns after request 0, the regenerated schedule says 10000000 ns"},
		{"speedup relabelled", func(m *Manifest, _ *string, _ []*Record) { m.Workload.Trace.Speedup = 2 },
			"2 request(s) off the schedule"},
		{"another item", func(_ *Manifest, _ *string, recs []*Record) { *recs[1].Item = 2 },
			`field "item": request 1 of a trace replay sends trace request 1 (workload item 1), so its item must be 1`},
		{"item without trace_ns", func(_ *Manifest, items *string, _ []*Record) {
			*items = strings.Replace(*items, `,"trace_ns":40000000}`, `}`, 1)
		}, "does not give one for every item"},
		{"not shipped", func(_ *Manifest, items *string, _ []*Record) { *items = "" }, "which the run does not ship"},
		{"count", func(m *Manifest, _ *string, _ []*Record) { m.Workload.Trace.Requests = 4 }, "workload.trace declares 4 requests, but workload.jsonl has 3 items with trace_ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, items, recs := traceRun()
			tc.edit(m, &items, recs)
			if got := traceProblems(t, m, items, recs); !strings.Contains(got, tc.wants) {
				t.Errorf("problems do not say %q:\n%s", tc.wants, got)
			}
		})
	}
}

// The manifest's trace fields are checked against the load.
func TestTraceManifestRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(m *Manifest)
		wants string
	}{
		{"no trace", func(m *Manifest) { m.Workload.Trace = nil }, `field "workload.trace": must be set: a point's arrival is "trace"`},
		{"trace unused", func(m *Manifest) { m.Load.Points[0].Arrival = ArrivalPoisson }, `no point's arrival is "trace"`},
		{"speedup", func(m *Manifest) { m.Workload.Trace.Speedup = 0 }, `field "workload.trace.speedup": must be a finite number above 0`},
		{"format", func(m *Manifest) { m.Workload.Trace.Format = "sharegpt" }, `field "workload.trace.format": must be one of`},
		{"requests", func(m *Manifest) { m.Load.Points[0].Requests = 2 }, "a trace replay sends the 3 requests of workload.trace"},
		{"warmup", func(m *Manifest) { m.Load.Warmup.Requests = 1 }, `field "load.warmup": must be empty in a trace replay`},
		{"not stored", func(m *Manifest) { m.Workload.Trace.Stored = "" }, `field "workload.trace.stored": must be "trace": a trace replay keeps its trace file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := traceRun()
			tc.edit(m)
			ps := &problems{}
			validateTrace(ps, m)
			var all []string
			for _, p := range ps.list {
				all = append(all, p.String())
			}
			if got := strings.Join(all, "\n"); !strings.Contains(got, tc.wants) {
				t.Errorf("problems do not say %q:\n%s", tc.wants, got)
			}
		})
	}
}

// traceFile is the Mooncake trace file traceRun's items were made from:
// a request before the window (at 5 ms), then the window's three at 10,
// 50 and 50 ms.
const traceFile = `{"timestamp": 0, "input_length": 9, "output_length": 9}
{"timestamp": 10, "input_length": 2, "output_length": 1}
{"timestamp": 50, "input_length": 1, "output_length": 1}
{"timestamp": 50, "input_length": 1, "output_length": 1}
`

// The items of a trace replay are rebuilt from the trace file the run
// keeps, after its window: a request removed (with its record, the
// workload's hash recomputed: CheckTraceItems reads the items as shipped),
// added, moved or lengthened is named; so are a kept file that is missing
// or does not hash to workload.trace.sha256. Before the file was kept,
// every one of these edits but the moved one passed.
func TestTraceItemsAreRebuiltFromTheKeptTraceFile(t *testing.T) {
	m, items, _ := traceRun()
	sum := sha256.Sum256([]byte(traceFile))
	m.Workload.Trace.SHA256 = hex.EncodeToString(sum[:])
	m.Workload.Trace.WindowStartNS = 10e6
	check := func(m *Manifest, data, items string) string {
		w := NewWorkloadItems()
		w.Write([]byte(items))
		w.Close()
		var d []byte
		if data != "" {
			d = []byte(data)
		}
		var all []string
		for _, p := range CheckTraceItems(m, d, w, WorkloadFile) {
			all = append(all, p.String())
		}
		return strings.Join(all, "\n")
	}
	if got := check(m, traceFile, items); got != "" {
		t.Fatalf("the items of the kept trace have problems:\n%s", got)
	}
	lines := strings.SplitAfter(items, "\n")
	for _, tc := range []struct{ name, data, items, wants string }{
		{"last removed", traceFile, lines[0] + lines[1], `field "item 2": is missing: the kept trace's window has 3 requests, the workload 2 items; the first missing is the trace request at line 4 (trace_ns 40000000, input 1, output 1 tokens)`},
		{"first removed", traceFile, lines[1] + lines[2], `field "item 0": states trace_ns 40000000, input 1, output 1 tokens, but is the trace request at line 2 (trace_ns 0, input 2, output 1 tokens)`},
		{"added", traceFile, items + lines[2], `field "item 3": is not in the trace: the kept trace's window has 3 requests, the workload 4 items`},
		{"moved", traceFile, lines[0] + strings.Replace(lines[1], "40000000", "30000000", 1) + lines[2], `field "item 1": states trace_ns 30000000`},
		{"lengthened", traceFile, lines[0] + strings.Replace(lines[1], `"input_tokens":1`, `"input_tokens":4`, 1) + lines[2], `field "item 1": states trace_ns 40000000, input 4, output 1 tokens, but is the trace request at line 3`},
		{"missing", "", items, `field "workload.trace.stored": is missing`},
		{"edited", strings.Replace(traceFile, "\n{\"timestamp\": 10,", "\n{\"timestamp\": 11,", 1), items, `field "workload.trace.sha256": the manifest says ` + m.Workload.Trace.SHA256 + `, the kept trace file hashes to`},
	} {
		if got := check(m, tc.data, tc.items); !strings.Contains(got, tc.wants) {
			t.Errorf("%s: problems do not say %q:\n%s", tc.name, tc.wants, got)
		}
	}
}
