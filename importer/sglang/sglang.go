package sglang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/serve"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.SGLang.
var Tool = schema.SGLang.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.SGLang, Files: "bench_serving output JSONL written with --output-details (one load point per line)", Stream: Stream,
	Format: ingest.Format{Title: "SGLang bench_serving output", Match: func(s *ingest.Sniffed) bool { return serve.Shows(s.Object(), serve.ToolSGLang) }},
}

// Run is one line of the output file.
type Run struct {
	Fields serve.Object
	Lists  *serve.Lists
	Line   int
}

// outputLine decodes and checks line lineNo of an output file; ok is
// false for a blank line.
func outputLine(name string, lineNo int, line []byte) (Run, bool, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return Run{}, false, nil
	}
	var o serve.Object
	// bench_serving writes with Python's json.dumps: its default
	// --request-rate inf is a bare Infinity, not JSON.
	if err := ingest.DecodeJSONLine(name, lineNo, ingest.QuotePythonLiterals(line), &o); err != nil {
		return Run{}, false, err
	}
	if msg := serve.OtherFormat(o, serve.ToolSGLang); msg != "" {
		return Run{}, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "", "%s", msg)
	}
	// An SGLang summary without the lists (a line written without
	// --output-details, of any version) is told so before its summary
	// fields are asked for: older versions write no mean_ttft_ms.
	noLists := !o.Has("ttfts") && !o.Has("itls") && !o.Has("output_lens")
	if noLists && serve.Shows(o, serve.ToolSGLang) {
		return Run{}, false, noDetails(name, lineNo)
	}
	var missing []string
	for _, k := range []string{"duration", "completed", "mean_ttft_ms"} {
		if !o.Has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return Run{}, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "", "not an SGLang bench_serving result: %s missing", strings.Join(missing, ", "))
	}
	if noLists {
		return Run{}, false, noDetails(name, lineNo)
	}
	l, err := serve.ReadLists(o, name, lineNo)
	if err != nil {
		return Run{}, false, err
	}
	return Run{Fields: o, Lists: l, Line: lineNo}, true, nil
}

// noDetails is the error of a result line saved without the per-request
// lists.
func noDetails(name string, lineNo int) error {
	return ingest.RecordErrorf(name, lineNo, lineNo-1, "ttfts", "missing: this result was saved without --output-details, the bench_serving flag that writes the per-request lists (input_lens, output_lens, ttfts, itls) an import needs; rerun with --output-details")
}

// Parse builds an import from one or more output files with every record
// in memory (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// runRef locates one checked line (one load point) of an output file.
type runRef struct {
	file         string
	data         []byte
	off, n, Line int
}

// Stream builds an import from one or more output files; every line of
// every file is a load point. The files are read line by line: every
// line is checked first, keeping only where it is; then each line is
// decoded again, its records built and passed to emit. A line holds one
// load point's per-request lists (columns), so one line's records are in
// memory at a time.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	if len(files) == 0 {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import sglang: no input file")
	}
	runs, err := checkLines(files)
	if err != nil {
		return nil, err
	}
	m := ingest.NewManifest(Tool, "", 0, 0)
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "server-usage"
	m.Load.Mode = schema.ModeConcurrency
	c := ingest.NewClaimSet(Tool)
	var names ingest.PointNames
	offset := int64(0)
	for ri, ref := range runs {
		run, _, err := outputLine(ref.file, ref.Line, ref.data[ref.off:ref.off+ref.n])
		if err != nil {
			return nil, err
		}
		o := run.Fields
		pt, err := loadPoint(&m, o, run.Lists.N, ref.file, ref.Line)
		if err != nil {
			return nil, err
		}
		pt.Name = names.Unique(pt.Name)
		dur, err := ingest.NonNegNS(o.Number("duration"), ingest.Second, "duration")
		if err != nil {
			return nil, ingest.RecordErrorf(ref.file, ref.Line, -1, "duration", "%w", err)
		}
		pt.Duration = schema.Duration(dur)
		rb, err := serve.Records(run.Lists, ref.file, ref.Line, pt.Name, fmt.Sprintf("%d:", ri), o.Number("duration"))
		if err != nil {
			return nil, err
		}
		// Runs of one file ran one after the other; place each point after
		// the previous one so that every time is non-negative and distinct.
		for i := range rb.Records {
			rb.Records[i].SentNS += offset
			rb.Records[i].EndNS += offset
		}
		offset += max(dur, rb.LastNS)
		for i := range rb.Records {
			if err := emit(&rb.Records[i]); err != nil {
				return nil, err
			}
		}
		m.Load.Points = append(m.Load.Points, pt)
		ingest.SetNote(&m, "sglang."+pt.Name+".duration_s", string(o.Number("duration")))
		if dur > 0 {
			ingest.ToolWindow(&m, pt.Name, 0, dur, "SGLang's duration (s), rounded to the ns")
		}
		fromFields(&m, o, pt.Name)
		claimRun(c, o, ref.file, pt.Name)
	}
	if err := checkOneMode(&m, runs); err != nil {
		return nil, err
	}
	describe(&m)
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}

// checkLines checks every line of every file, keeping where each result
// line is; a file without one is refused.
func checkLines(files []ingest.File) ([]runRef, error) {
	var runs []runRef
	for _, f := range files {
		n := len(runs)
		err := ingest.EachLine(f.Data, func(lineNo, off int, line []byte) error {
			_, ok, err := outputLine(f.Name, lineNo, line)
			if ok {
				runs = append(runs, runRef{f.Name, f.Data, off, len(line), lineNo})
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(runs) == n {
			return nil, ingest.Errorf(f.Name, "no results")
		}
	}
	return runs, nil
}

// loadPoint is the load point of one result line of n requests: its rate
// (Poisson arrivals) when request_rate is finite, which makes m's load
// mode rate, else its concurrency cap, else all n at once. Its name is
// not yet unique among the run's points.
func loadPoint(m *schema.Manifest, o serve.Object, n int, file string, line int) (schema.Point, error) {
	pt := schema.Point{Requests: n}
	rate, maxConc, err := o.RateAndCap(file, line, "inf", "Infinity")
	if err != nil {
		return schema.Point{}, err
	}
	pt.Concurrency = int(maxConc)
	switch {
	case !math.IsInf(rate, 1):
		m.Load.Mode = schema.ModeRate
		pt.Rate, pt.Arrival = rate, schema.ArrivalPoisson
		pt.Name = ingest.PointName(schema.ModeRate, rate)
	case pt.Concurrency > 0:
		pt.Name = ingest.PointName(schema.ModeConcurrency, float64(pt.Concurrency))
	default:
		pt.Concurrency = n
		pt.Name = ingest.PointName(schema.ModeConcurrency, float64(n))
	}
	return pt, nil
}

// fromFields takes what one result line says about the run into m: its
// backend, dataset, tag (a note of point), server_info, model and random
// token lengths (of point, the last of m's load points).
func fromFields(m *schema.Manifest, o serve.Object, point string) {
	if v := o.String("backend"); v != "" {
		ingest.SetNote(m, "sglang.backend", v)
	}
	if v := o.String("dataset_name"); v != "" {
		m.Workload.Dataset = v
	}
	if v := o.String("tag"); v != "" {
		ingest.SetNote(m, "sglang."+point+".tag", v)
	}
	if raw, ok := o["server_info"]; ok && len(raw) > 2 && len(raw) < 1<<16 {
		ingest.SetNote(m, "sglang.server_info", string(raw))
		serverInfo(m, raw)
	}
	if v := o.String("model_id"); v != "" {
		m.Model.Name = v
	}
	if n := o.Number("random_input_len"); n != "" {
		if v, err := ingest.Int(n); err == nil && v > 0 {
			m.Load.Points[len(m.Load.Points)-1].InputTokens = int(v)
		}
	}
	if n := o.Number("random_output_len"); n != "" {
		if v, err := ingest.Int(n); err == nil && v > 0 {
			m.Load.Points[len(m.Load.Points)-1].OutputTokens = int(v)
		}
	}
}

// serverInfo takes the model, engine version and parallelism from the
// server_info SGLang saves with a result (ignored when it does not
// decode; a size is kept only when positive and below 2^20).
func serverInfo(m *schema.Manifest, raw json.RawMessage) {
	var si struct {
		ModelPath string      `json:"model_path"`
		Version   string      `json:"version"`
		TPSize    json.Number `json:"tp_size"`
		DPSize    json.Number `json:"dp_size"`
		PPSize    json.Number `json:"pp_size"`
		EPSize    json.Number `json:"ep_size"`
	}
	if json.Unmarshal(raw, &si) != nil {
		return
	}
	if si.ModelPath != "" {
		m.Model.Name = si.ModelPath
	}
	if si.Version != "" {
		m.Engine.Name, m.Engine.Version = "sglang", si.Version
	}
	for _, p := range []struct {
		n   json.Number
		dst *int
	}{
		{si.TPSize, &m.Engine.Parallelism.Tensor},
		{si.DPSize, &m.Engine.Parallelism.Data},
		{si.PPSize, &m.Engine.Parallelism.Pipeline},
		{si.EPSize, &m.Engine.Parallelism.Expert},
	} {
		if v, err := ingest.Int(p.n); err == nil && v > 0 && v < 1<<20 {
			*p.dst = int(v)
		}
	}
}

// checkOneMode refuses a run whose lines mix finite and unlimited rates:
// a run holds rate points or concurrency points, not both.
func checkOneMode(m *schema.Manifest, runs []runRef) error {
	if m.Load.Mode != schema.ModeRate {
		return nil
	}
	for i, pt := range m.Load.Points {
		if pt.Rate == 0 {
			r := runs[i]
			return ingest.RecordErrorf(r.file, r.Line, -1, "request_rate", "unlimited (inf) while other lines have a finite rate: a run holds rate points or concurrency points, not both; import the unlimited-rate lines separately")
		}
	}
	return nil
}

// describe states in m how each record field was rebuilt from SGLang's
// per-request lists.
func describe(m *schema.Manifest) {
	ingest.Derive(m, "sent_ns: SGLang stores no send times; every request of a point is placed at the point's start (points laid one after another by their duration)")
	ingest.Derive(m, "chunks_ns: rebuilt as ttft + cumulative sum of itl (per-chunk gaps in seconds)")
	ingest.Derive(m, "end_ns: per-request latency not stored; set to the last chunk (ttft + Σitl)")
	ingest.Derive(m, "orig.duration: SGLang's run duration (s), copied into every record of the point so that its rates can be recomputed")
	ingest.Derive(m, "load.points[i].duration: SGLang's duration, rounded to the ns; exact value in notes[\"sglang.<point>.duration_s\"]")
	ingest.Absent(m, schema.FieldSent, "SGLang stores no send times; every request of a point is placed at the point's start")
	ingest.Measured(m, schema.FieldFirstChunk, schema.FieldInputTokens, schema.FieldOutputTokens)
	ingest.Derived(m, schema.FieldChunks, "ttft + cumulative sum of itl (per-chunk gaps in seconds)")
	ingest.Derived(m, schema.FieldLastChunk, "ttft + Σ itl")
	ingest.Derived(m, schema.FieldEnd, "the last chunk (per-request latency not stored)")
}

const noLatency = "SGLang's --output-details saves ttfts and itls but no per-request latency: its e2e_latency and tpot use the time of the last chunk including [DONE], which is not stored"

func claimRun(c *ingest.ClaimSet, o serve.Object, file, point string) {
	c.Add(file, point, "counts.ok", "completed", o.Number("completed"), 1)
	c.Add(file, point, schema.MetricWindow, "duration", o.Number("duration"), ingest.Second)
	c.Add(file, point, schema.MetricRequestThroughput, "request_throughput", o.Number("request_throughput"), 1)
	c.Add(file, point, schema.MetricOutputTokenThroughput, "output_throughput", o.Number("output_throughput"), 1)
	c.Add(file, point, schema.MetricTotalTokenThroughput, "total_throughput", o.Number("total_throughput"), 1)
	serve.DistClaims(c, o, file, point, map[string]string{
		"ttft": schema.MetricTTFT, "tpot": schema.MetricTPOT, "itl": schema.MetricITL, "e2e_latency": schema.MetricE2E,
	}, map[string]string{"tpot": noLatency, "e2e_latency": noLatency})
}
