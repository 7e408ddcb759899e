package vllm

import (
	"bytes"
	"encoding/json"
	"math"
	"time"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/serve"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.VLLM.
var Tool = schema.VLLM.Name

// Registration lists the importer in importer's registry (records built in memory: the input cannot be read element by element).
var Registration = ingest.Registration{Peer: schema.VLLM, Files: "one result JSON (--save-result; per-request lists from the 2024 layout or --save-detailed)", Parse: Parse,
	Format: ingest.Format{Title: "vLLM benchmark_serving output", Match: func(s *ingest.Sniffed) bool { return serve.Shows(s.Object(), serve.ToolVLLM) }},
}

// Result is one parsed vLLM result file.
type Result struct {
	Fields serve.Object
	Lists  *serve.Lists
}

func parseResult(data []byte, name string) (*Result, error) {
	head := ingest.Sniff(data, 1)
	if len(head) == 0 {
		return nil, ingest.Errorf(name, "the file is empty: a vLLM result is one JSON object")
	}
	if head[0] != '{' {
		return nil, ingest.Errorf(name, "not a vLLM result (expected one JSON object)")
	}
	var o serve.Object
	if err := ingest.DecodeJSON(name, data, &o); err != nil {
		return nil, severalValues(data, name, err)
	}
	if msg := serve.OtherFormat(o, serve.ToolVLLM); msg != "" {
		return nil, ingest.Errorf(name, "%s", msg)
	}
	if !o.Has("duration") || !o.Has("completed") || !(o.Has("mean_ttft_ms") || o.Has("request_throughput")) {
		return nil, ingest.Errorf(name, "not a vLLM benchmark result: duration, completed and the ttft summary are missing")
	}
	if o.Has("benchmarks") || o.Has("records") {
		return nil, ingest.Errorf(name, "not a vLLM benchmark result")
	}
	l, err := serve.ReadLists(o, name, 0)
	if err != nil {
		return nil, err
	}
	return &Result{Fields: o, Lists: l}, nil
}

// severalValues explains err, the error of decoding data as one JSON
// object, when data is JSON Lines: SGLang's bench_serving output (said so
// when its first line shows it), or vLLM results appended one per line
// (--append-result, or a script that collects them), of which an import
// takes one per file. Otherwise err is returned as it is.
func severalValues(data []byte, name string, err error) error {
	line, _, _ := bytes.Cut(bytes.TrimLeft(data, " \t\r\n\ufeff"), []byte("\n"))
	var first serve.Object
	if json.Unmarshal(ingest.QuotePythonLiterals(line), &first) != nil {
		return err
	}
	if msg := serve.OtherFormat(first, serve.ToolVLLM); msg != "" {
		return ingest.Errorf(name, "%s", msg)
	}
	switch {
	case len(bytes.TrimSpace(data)) == len(bytes.TrimSpace(line)):
	case serve.Shows(first, serve.ToolVLLM):
		return ingest.Errorf(name, "the file holds vLLM results one per line (JSON Lines), not one vLLM result: import takes one result per file, so put each line in a file of its own")
	default:
		return ingest.Errorf(name, "the file holds one JSON object per line (JSON Lines), not one vLLM result")
	}
	return err
}

// Parse builds an import from one vLLM result file.
func Parse(files []ingest.File) (*ingest.Result, error) {
	if len(files) == 0 {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import vllm: no input file")
	}
	if len(files) > 1 {
		return nil, ingest.Errorf(files[1].Name, "vllm takes one result file per import")
	}
	f := files[0]
	r, err := parseResult(f.Data, f.Name)
	if err != nil {
		return nil, err
	}
	return build(r, f.Name)
}

// build rebuilds the records of r and its manifest and claims.
func build(r *Result, file string) (*ingest.Result, error) {
	o := r.Fields
	pt, mode, err := loadPoint(o, r.Lists.N, file)
	if err != nil {
		return nil, err
	}
	dur, err := ingest.NonNegNS(o.Number("duration"), ingest.Second, "duration")
	if err != nil {
		return nil, ingest.RecordErrorf(file, 0, -1, "duration", "%w", err)
	}
	pt.Duration = schema.Duration(dur)
	rb, err := serve.Records(r.Lists, file, 0, pt.Name, "", o.Number("duration"))
	if err != nil {
		return nil, err
	}
	date := o.String("date")
	epoch, zoned := savedAt(date, dur)
	m := ingest.NewManifest(Tool, "", epoch, epoch+max(dur, rb.LastNS))
	m.Load.Mode = mode
	m.Load.Points = []schema.Point{pt}
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "server-usage"
	ingest.SetNote(&m, "vllm.duration_s", string(o.Number("duration")))
	if date != "" {
		ingest.SetNote(&m, NoteDate, date)
		if zoned {
			ingest.Derive(&m, "epoch_unix_ns: vLLM's date (with its stated zone) minus duration")
		} else {
			ingest.SetNote(&m, NoteDateZone, "unknown: vLLM writes the local time of the machine that saved the result, without a zone")
			ingest.Derive(&m, "epoch_unix_ns, start_time, finish_time: vLLM's date %s is local time in an unstated zone, so it names no instant (±14 h); declared unknown, the date kept in notes[\"vllm.date\"]", date)
		}
	}
	describe(&m, rb, o.Number("request_rate"))
	if dur > 0 {
		ingest.ToolWindow(&m, pt.Name, 0, dur, "vLLM's duration (s), rounded to the ns")
	}
	fromFields(&m, o)
	c := ingest.NewClaimSet(Tool)
	claimSummary(c, o, file, pt.Name, rb)
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	return &ingest.Result{Manifest: m, Records: rb.Records, Claims: claims}, nil
}

// loadPoint is the run's load point and mode: a rate (Poisson, or gamma
// with a burstiness other than 1) when request_rate is finite, else the
// concurrency cap, else every one of the n prompts at once.
func loadPoint(o serve.Object, n int, file string) (schema.Point, string, error) {
	rate, maxConc, err := o.RateAndCap(file, 0, "inf")
	if err != nil {
		return schema.Point{}, "", err
	}
	numPrompts := int64(n)
	if n := o.Number("num_prompts"); n != "" {
		if v, err := ingest.Int(n); err == nil {
			numPrompts = v
		}
	}
	pt := schema.Point{Requests: int(numPrompts)}
	mode := schema.ModeConcurrency
	switch {
	case !math.IsInf(rate, 1):
		mode = schema.ModeRate
		pt.Rate = rate
		pt.Arrival = schema.ArrivalPoisson
		if b := o.Number("burstiness"); b != "" && b != "1" && b != "1.0" {
			pt.Arrival = schema.ArrivalGamma
			if v, err := ingest.ToFloat(b, 1); err == nil {
				pt.Burstiness = v
			}
		}
		pt.Concurrency = int(maxConc)
		pt.Name = ingest.PointName(mode, rate)
	case maxConc > 0:
		pt.Concurrency = int(maxConc)
		pt.Name = ingest.PointName(mode, float64(maxConc))
	default:
		// request_rate inf without a cap: every request dispatched at once.
		pt.Concurrency = int(numPrompts)
		pt.Name = ingest.PointName(mode, float64(numPrompts))
	}
	return pt, mode, nil
}

// savedAt is the run's epoch from date, the local time the result was
// saved at the end of the run (datetime.now().strftime("%Y%m%d-%H%M%S")),
// minus its duration: without a zone it names no instant, so the epoch
// stays 0 (unknown, zoned false) unless the date carries an offset.
func savedAt(date string, dur int64) (epoch int64, zoned bool) {
	if date == "" {
		return 0, false
	}
	for _, layout := range []string{"20060102-150405Z07:00", "20060102-150405-0700", "20060102-150405 MST"} {
		if t, err := time.Parse(layout, date); err == nil && (layout != "20060102-150405 MST" || t.Location() == time.UTC) {
			return t.UnixNano() - dur, true
		}
	}
	return 0, false
}

// describe states in m how each record field was rebuilt, which depends
// on whether this vLLM version saved start times and latencies.
func describe(m *schema.Manifest, rb *serve.Rebuilt, requestRate json.Number) {
	if rb.HasStart {
		ingest.Derive(m, "sent_ns: start_times (perf_counter seconds) minus the earliest")
	} else {
		ingest.Derive(m, "sent_ns: not stored by this vLLM version; set to 0 for every request (request_rate %v)", requestRate)
	}
	ingest.Derive(m, "chunks_ns: rebuilt as ttft + cumulative sum of itl (per-chunk gaps in seconds)")
	if rb.HasLatency {
		ingest.Derive(m, "end_ns: sent + latencies[i]")
	} else {
		ingest.Derive(m, "end_ns: per-request latency not stored by this vLLM version; set to the last chunk (ttft + Σitl), which omits the time from the last chunk to the end of the stream")
	}
	ingest.Derive(m, "orig.duration: vLLM's run duration (s), copied into every record so that its rates can be recomputed")
	ingest.Derive(m, "load.points[0].duration: vLLM's duration (dispatch of the first request to the end of the last), rounded to the ns; exact value in notes[\"vllm.duration_s\"]")
	if rb.HasStart {
		ingest.Derived(m, schema.FieldSent, "start_times (perf_counter seconds) minus the earliest")
	} else {
		ingest.Absent(m, schema.FieldSent, "not stored by this vLLM version; 0 for every request")
	}
	ingest.Measured(m, schema.FieldFirstChunk, schema.FieldInputTokens, schema.FieldOutputTokens)
	ingest.Derived(m, schema.FieldChunks, "ttft + cumulative sum of itl (per-chunk gaps in seconds)")
	if rb.HasLatency {
		ingest.Derived(m, schema.FieldLastChunk, "ttft + Σ itl")
		ingest.Derived(m, schema.FieldEnd, "sent + latencies[i]")
	} else {
		ingest.Derived(m, schema.FieldLastChunk, "ttft + Σ itl")
		ingest.Derived(m, schema.FieldEnd, "the last chunk (per-request latency not stored)")
	}
}

// fromFields fills the model, tokenizer, engine, title, seed and warmup
// from the result's fields, keeping the backend and endpoint as notes.
func fromFields(m *schema.Manifest, o serve.Object) {
	if md := o.String("model_id"); md != "" {
		m.Model.Name = md
	}
	if tk := o.String("tokenizer_id"); tk != "" {
		m.Model.Tokenizer = tk
	}
	if be := o.String("backend"); be != "" {
		ingest.SetNote(m, "vllm.backend", be)
		if be == "vllm" || be == "sglang" || be == "tgi" || be == "lmdeploy" {
			m.Engine.Name = be
		}
	}
	if et := o.String("endpoint_type"); et != "" {
		ingest.SetNote(m, "vllm.endpoint_type", et)
	}
	if lb := o.String("label"); lb != "" {
		m.Title = lb
	}
	if n := o.Number("seed"); n != "" {
		if v, err := ingest.Int(n); err == nil {
			m.Client.Seed = &v
		}
	}
	if n := o.Number("num_warmups"); n != "" {
		if v, err := ingest.Int(n); err == nil {
			m.Load.Warmup.Requests = int(v)
		}
	}
}

// Reasons a vLLM number cannot be recomputed.
const (
	noLatency = "this vLLM version did not save per-request latency (only ttft and per-chunk itl): ttft + Σitl stops at the last chunk, vLLM's latency at the end of the stream"
)

func claimSummary(c *ingest.ClaimSet, o serve.Object, file, point string, rb *serve.Rebuilt) {
	c.Add(file, point, "counts.ok", "completed", o.Number("completed"), 1)
	if o.Has("failed") {
		c.Add(file, point, "counts.error", "failed", o.Number("failed"), 1)
	}
	c.Add(file, point, schema.MetricWindow, "duration", o.Number("duration"), ingest.Second)
	c.Add(file, point, schema.MetricRequestThroughput, "request_throughput", o.Number("request_throughput"), 1)
	c.Add(file, point, schema.MetricOutputTokenThroughput, "output_throughput", o.Number("output_throughput"), 1)
	if o.Has("total_token_throughput") {
		c.Add(file, point, schema.MetricTotalTokenThroughput, "total_token_throughput", o.Number("total_token_throughput"), 1)
	}
	for _, k := range []string{"request_goodput", "request_goodput:"} {
		if o.Has(k) {
			c.Add(file, point, schema.MetricGoodput, k, o.Number(k), 1)
		}
	}
	reasons := map[string]string{}
	if !rb.HasLatency {
		reasons["tpot"] = noLatency
		reasons["e2el"] = noLatency
		reasons["latency"] = noLatency
	}
	serve.DistClaims(c, o, file, point, map[string]string{
		"ttft": schema.MetricTTFT, "tpot": schema.MetricTPOT, "itl": schema.MetricITL, "e2el": schema.MetricE2E, "latency": schema.MetricE2E,
	}, reasons)
}
