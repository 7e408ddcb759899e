package guidellm

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Parse builds an import from one GuideLLM report with every record in
// memory (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from one GuideLLM report. benchmarks.json is
// walked token by token (ingest.JSONWalker): each benchmark is read
// without its requests, and of benchmarks[].requests.{successful,
// errored, incomplete}[] only where each request is is kept (24 bytes a
// request). The requests are then read one at a time, in the report's
// order to check them, and in order of start to emit their records.
// benchmarks.yaml is converted to JSON first (the YAML document is in
// memory while it is converted), then read the same way.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	if len(files) == 0 {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import guidellm: no input file")
	}
	if len(files) > 1 {
		return nil, ingest.Errorf(files[1].Name, "guidellm takes one report per import")
	}
	name := files[0].Name
	data, err := reportJSON(files[0].Data, name)
	if err != nil {
		return nil, err
	}
	x, err := indexReport(data, name)
	if err != nil {
		return nil, err
	}
	return build(x, emit)
}

// groups are GuideLLM's request groups that hold requests, sorted (the
// order in which their requests are read; "total" is null or a
// duplicate of the others).
var groups = []string{"errored", "incomplete", "successful"}

// requestRef locates one request of the report.
type requestRef struct {
	off       int
	n, bi, ri int32
	group     int32 // index in groups
	start     int64 // set by the check pass
}

// reportIndex is a GuideLLM report as its benchmarks without their
// requests and where each request is.
type reportIndex struct {
	name string
	data []byte
	rep  Report
	// refs are the requests by benchmark, then group (sorted), then
	// order in the group; ends[bi] is the end of benchmark bi's refs.
	refs []requestRef
	ends []int
}

// indexReport walks a report: benchmarks[] is read one benchmark at a
// time, every other key into Report as a whole-document decode would.
func indexReport(data []byte, name string) (*reportIndex, error) {
	if len(data) > math.MaxInt32 {
		// Request sizes are kept in 32 bits; ReadFiles reads at most 1 GiB.
		return nil, ingest.Errorf(name, "larger than %d bytes", math.MaxInt32)
	}
	w, err := ingest.NewJSONWalker(name, data)
	if err != nil {
		return nil, err
	}
	x := &reportIndex{name: name, data: data}
	seen, list := false, false
	err = w.Object("", func(key string) error {
		if !strings.EqualFold(key, "benchmarks") {
			return w.DecodeKey(key, "", &x.rep)
		}
		if seen {
			return w.Errorf("benchmarks", "duplicate key %q", key)
		}
		seen = true
		if w.NextIsNull() {
			return w.Skip()
		}
		list = true
		return w.List("benchmarks", func(bi int) error { return x.benchmark(w, bi) })
	})
	if err != nil {
		return nil, err
	}
	if !list {
		return nil, ingest.Errorf(name, "not a GuideLLM report: no benchmarks list")
	}
	if len(x.rep.Benchmarks) == 0 {
		return nil, ingest.Errorf(name, "the report has no benchmarks")
	}
	return x, nil
}

// benchmark indexes element bi of benchmarks.
func (x *reportIndex) benchmark(w *ingest.JSONWalker, bi int) error {
	field := fmt.Sprintf("benchmarks[%d]", bi)
	x.rep.Benchmarks = append(x.rep.Benchmarks, Benchmark{})
	b := &x.rep.Benchmarks[bi]
	first := len(x.refs)
	seen := false
	err := w.Object(field, func(key string) error {
		if !strings.EqualFold(key, "requests") {
			return w.DecodeKey(key, field, b)
		}
		if seen {
			return w.Errorf(field+".requests", "duplicate key %q", key)
		}
		seen = true
		got := map[string]bool{}
		return w.Object(field+".requests", func(g string) error {
			gi := sort.SearchStrings(groups, g)
			if gi == len(groups) || groups[gi] != g {
				return w.Skip()
			}
			if got[g] {
				return w.Errorf(field+".requests."+g, "duplicate key %q", g)
			}
			got[g] = true
			return w.List(field+".requests."+g, func(ri int) error {
				off, raw, err := w.Raw()
				if err != nil {
					return err
				}
				x.refs = append(x.refs, requestRef{off: off, n: int32(len(raw)), bi: int32(bi), ri: int32(ri), group: int32(gi)})
				return nil
			})
		})
	})
	if err != nil {
		return err
	}
	// The report's order: groups sorted, whatever order the file has.
	own := x.refs[first:]
	sort.SliceStable(own, func(i, j int) bool { return own[i].group < own[j].group })
	x.ends = append(x.ends, len(x.refs))
	return nil
}

// bench is what the records of one benchmark take from it.
type bench struct {
	point  string
	window map[string]json.Number
	ms, me int64
}

// request builds and checks the record of the request ref points at.
func (x *reportIndex) request(ref *requestRef, bs []bench) (parsedReq, error) {
	g := groups[ref.group]
	rf := fmt.Sprintf("benchmarks[%d].requests.%s[%d]", ref.bi, g, ref.ri)
	b := &bs[ref.bi]
	raw := x.data[ref.off : ref.off+int(ref.n)]
	var r Request
	if err := ingest.DecodeJSONAt(x.name, x.data, ref.off, raw, -1, rf, &r); err != nil {
		return parsedReq{}, err
	}
	p, err := request(&r, raw, x.name, rf, statusOf[g], b.point, b.window)
	if err != nil {
		return p, err
	}
	if p.endNS < b.ms || p.startNS > b.me {
		p.rec.Phase = schema.PhaseWarmup
	}
	return p, nil
}

// window reads benchmark b's measurement window (scheduler_metrics,
// else the benchmark's start and end) and names its load point; it
// returns the point, its load mode and what its records take from it.
func window(b *Benchmark, file, field string, names *ingest.PointNames) (schema.Point, string, bench, error) {
	var sm schedMetrics
	if len(b.SchedulerMetrics) > 0 {
		if err := json.Unmarshal(b.SchedulerMetrics, &sm); err != nil {
			return schema.Point{}, "", bench{}, ingest.RecordErrorf(file, 0, -1, field+".scheduler_metrics", "not an object")
		}
	}
	ms, me := sm.MeasureStartTime, sm.MeasureEndTime
	if ms == "" {
		ms = b.StartTime
	}
	if me == "" {
		me = b.EndTime
	}
	msNS, err := ingest.ToNS(ms, ingest.Second)
	if err != nil {
		return schema.Point{}, "", bench{}, ingest.RecordErrorf(file, 0, -1, field+".scheduler_metrics.measure_start_time", "%w", err)
	}
	meNS, err := ingest.ToNS(me, ingest.Second)
	if err != nil {
		return schema.Point{}, "", bench{}, ingest.RecordErrorf(file, 0, -1, field+".scheduler_metrics.measure_end_time", "%w", err)
	}
	if meNS < msNS {
		return schema.Point{}, "", bench{}, ingest.RecordErrorf(file, 0, -1, field+".scheduler_metrics", "measurement window ends before it starts (negative duration)")
	}
	pt, mode := pointOf(b)
	pt.Name = names.Unique(pt.Name)
	pt.Duration = schema.Duration(meNS - msNS)
	return pt, mode, bench{point: pt.Name, window: map[string]json.Number{"measure_start_time": ms, "measure_end_time": me}, ms: msNS, me: meNS}, nil
}

// describe states in m how each record field was read from the report.
func describe(m *schema.Manifest) {
	ingest.Derive(m, "sent_ns: info.timings.request_start (epoch seconds) minus the earliest; end_ns: info.timings.request_end")
	ingest.Derive(m, "chunks_ns: GuideLLM stores only first_token_iteration and last_token_iteration (and a count of token iterations); chunks_ns = [first, last], the chunks in between are not stored")
	ingest.Derive(m, "phase: requests outside a benchmark's measurement window (scheduler_metrics.measure_start_time..measure_end_time, GuideLLM's rule: request_end ≥ start and request_start ≤ end) are warmup (warmup or cooldown)")
	ingest.Derive(m, "status: successful → ok, errored → error, incomplete → cancelled")
	ingest.Measured(m, schema.FieldSent, schema.FieldEnd, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldInputTokens, schema.FieldOutputTokens)
	ingest.Absent(m, schema.FieldChunks, "GuideLLM stores only the first and last token iterations; chunks_ns holds those two, not the chunks between them")
	ingest.Derive(m, "orig.scheduler_metrics: the benchmark's measure_start_time and measure_end_time, copied into every record of the benchmark")
	ingest.Derive(m, "load.points[i].duration: the benchmark's measurement window; exact values in notes[\"guidellm.<point>.scheduler_metrics\"]")
}

// claimBenchmarks keeps each benchmark's scheduler metrics and warmup and
// cooldown as notes of its point, and its statistics as claims.
func claimBenchmarks(m *schema.Manifest, rep *Report, points []schema.Point, file string) (*schema.Claims, error) {
	c := ingest.NewClaimSet(Tool)
	for bi := range rep.Benchmarks {
		b := &rep.Benchmarks[bi]
		pn := points[bi].Name
		if len(b.SchedulerMetrics) > 0 {
			ingest.SetNote(m, "guidellm."+pn+".scheduler_metrics", compactJSON(b.SchedulerMetrics))
		}
		if b.WarmupDuration != "" || b.CooldownDuration != "" {
			ingest.SetNote(m, "guidellm."+pn+".warmup_cooldown_s", fmt.Sprintf("warmup_duration %s, cooldown_duration %s", b.WarmupDuration, b.CooldownDuration))
		}
		claimBenchmark(c, b, file, pn, bi)
	}
	return c.Claims()
}

// build turns the indexed report into the import: a checking pass over
// each benchmark and its requests, the manifest and claims, then the
// records emitted in order of start.
func build(x *reportIndex, emit ingest.RecordFunc) (*ingest.Result, error) {
	rep, file := &x.rep, x.name
	epoch := int64(math.MaxInt64)
	last := int64(math.MinInt64)
	var points []schema.Point
	var names ingest.PointNames
	modes := map[string]bool{}
	bs := make([]bench, len(rep.Benchmarks))
	// First each benchmark and its requests are checked in the report's
	// order, keeping each request's start.
	for bi := range rep.Benchmarks {
		pt, mode, bn, err := window(&rep.Benchmarks[bi], file, fmt.Sprintf("benchmarks[%d]", bi), &names)
		if err != nil {
			return nil, err
		}
		modes[mode] = true
		points = append(points, pt)
		bs[bi] = bn
		lo := 0
		if bi > 0 {
			lo = x.ends[bi-1]
		}
		for i := lo; i < x.ends[bi]; i++ {
			p, err := x.request(&x.refs[i], bs)
			if err != nil {
				return nil, err
			}
			x.refs[i].start = p.startNS
			epoch = min(epoch, p.startNS)
			last = max(last, p.endNS)
		}
	}
	if len(x.refs) == 0 {
		return nil, ingest.Errorf(file, "the report holds no requests")
	}
	m := ingest.NewManifest(Tool, rep.Metadata.GuideLLMVersion, epoch, last)
	m.Load.Points = points
	m.Load.Mode = schema.ModeConcurrency
	if modes[schema.ModeRate] {
		m.Load.Mode = schema.ModeRate
	}
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "server-usage"
	describe(&m)
	if v := rep.Metadata.PythonVersion; v != "" {
		ingest.SetNote(&m, "guidellm.python_version", v)
	}
	if v := rep.Metadata.Platform; v != "" {
		ingest.SetNote(&m, "guidellm.platform", v)
	}
	fillFromArgs(&m, rep.Args)
	claims, err := claimBenchmarks(&m, rep, points, file)
	if err != nil {
		return nil, err
	}
	// Then the records are rebuilt and emitted in order of start
	// (sent_ns), ties in the report's order.
	sort.SliceStable(x.refs, func(i, j int) bool { return x.refs[i].start < x.refs[j].start })
	for i := range x.refs {
		p, err := x.request(&x.refs[i], bs)
		if err != nil {
			return nil, err
		}
		p.rec.SentNS = p.startNS - epoch
		p.rec.EndNS = p.endNS - epoch
		if err := emit(&p.rec); err != nil {
			return nil, err
		}
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}
