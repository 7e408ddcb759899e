package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Object is one result object, its fields kept raw.
type Object map[string]json.RawMessage

// Number returns field k as a number ("" when absent or null). A string
// holding a number (vLLM writes request_rate "inf" as a string) is
// returned as its text.
func (o Object) Number(k string) json.Number { return ingest.RawNumber(o[k]) }

// String returns field k as a string ("" when absent or not a string).
func (o Object) String(k string) string {
	var s string
	json.Unmarshal(o[k], &s)
	return s
}

// Has reports whether field k is present and not null.
func (o Object) Has(k string) bool {
	raw, ok := o[k]
	return ok && string(raw) != "null"
}

// Lists are the per-request lists of one result object.
type Lists struct {
	N          int
	InputLens  []json.Number
	OutputLens []json.Number
	TTFTs      []json.Number
	ITLs       [][]json.RawMessage
	Errors     []string
	StartTimes []json.Number // nil when not saved
	Latencies  []json.Number // nil when not saved
}

// ReadLists decodes the per-request lists; every list must have the same
// length. where names the file (and line) in errors.
func ReadLists(o Object, file string, line int) (*Lists, error) {
	l := &Lists{}
	need := func(k string, v any) error {
		raw, ok := o[k]
		if !ok || string(raw) == "null" {
			return ingest.RecordErrorf(file, line, -1, k, "missing: per-request lists were not saved (vLLM: --save-detailed; SGLang: --output-details)")
		}
		if err := ingest.DecodeJSON(file, raw, v); err != nil {
			if bytes.Contains(raw, []byte(`"NaN"`)) || bytes.Contains(raw, []byte(`Infinity"`)) {
				return ingest.RecordErrorf(file, line, -1, k, "holds NaN or Infinity (an undefined value written by Python), not a number")
			}
			return ingest.RecordErrorf(file, line, -1, k, "not a list of the expected type")
		}
		return nil
	}
	if err := need("ttfts", &l.TTFTs); err != nil {
		return nil, err
	}
	if err := need("itls", &l.ITLs); err != nil {
		return nil, err
	}
	if err := need("output_lens", &l.OutputLens); err != nil {
		return nil, err
	}
	if err := need("input_lens", &l.InputLens); err != nil {
		return nil, err
	}
	l.N = len(l.TTFTs)
	if o.Has("errors") {
		if err := need("errors", &l.Errors); err != nil {
			return nil, err
		}
	}
	if o.Has("start_times") {
		if err := need("start_times", &l.StartTimes); err != nil {
			return nil, err
		}
	}
	if o.Has("latencies") {
		var lat []json.Number
		if err := need("latencies", &lat); err == nil && len(lat) == l.N {
			l.Latencies = lat
		}
	}
	for k, n := range map[string]int{"itls": len(l.ITLs), "output_lens": len(l.OutputLens), "input_lens": len(l.InputLens)} {
		if n != l.N {
			return nil, ingest.RecordErrorf(file, line, -1, k, "has %d entries, ttfts has %d (truncated or mixed file)", n, l.N)
		}
	}
	if l.Errors != nil && len(l.Errors) != l.N {
		return nil, ingest.RecordErrorf(file, line, -1, "errors", "has %d entries, ttfts has %d", len(l.Errors), l.N)
	}
	if l.StartTimes != nil && len(l.StartTimes) != l.N {
		return nil, ingest.RecordErrorf(file, line, -1, "start_times", "has %d entries, ttfts has %d", len(l.StartTimes), l.N)
	}
	return l, nil
}

// RateAndCap reads the request_rate of o, +Inf when absent or one of
// unlimited (the tool's spellings of no limit), and its max_concurrency,
// 0 when absent: vLLM and SGLang save both under these names.
func (o Object) RateAndCap(file string, line int, unlimited ...string) (rate float64, maxConc int64, err error) {
	rate = math.Inf(1)
	if n := o.Number("request_rate"); n != "" && !slices.Contains(unlimited, string(n)) {
		v, err := ingest.ToFloat(n, 1)
		if err != nil || v <= 0 {
			return 0, 0, ingest.RecordErrorf(file, line, -1, "request_rate", "not a positive rate: %s", n)
		}
		rate = v
	}
	if n := o.Number("max_concurrency"); n != "" {
		v, err := ingest.Int(n)
		if err != nil || v < 0 {
			return 0, 0, ingest.RecordErrorf(file, line, -1, "max_concurrency", "not a count: %s", n)
		}
		maxConc = v
	}
	return rate, maxConc, nil
}

// Rebuilt is the outcome of Records.
type Rebuilt struct {
	Records []schema.Record
	// HasStart and HasLatency say whether send times and per-request
	// latencies were stored.
	HasStart, HasLatency bool
	// LastNS is the latest end, in ns since the earliest send.
	LastNS int64
}

// Records rebuilds one record per request of l: sent_ns from start_times
// (else 0), chunks_ns = ttft + cumulative per-chunk gaps, end_ns = send +
// latency when latencies were saved, else the last chunk. Orig holds the
// request's values verbatim under the tool's names: ttft, itl, input_len,
// output_len, error, start_time and latency when saved, and the run's
// duration (the tool's rate denominator, which no record can rebuild).
func Records(l *Lists, file string, line int, point, idPrefix string, duration json.Number) (*Rebuilt, error) {
	out := &Rebuilt{HasStart: l.StartTimes != nil, HasLatency: l.Latencies != nil}
	starts, err := startOffsets(l, file, line)
	if err != nil {
		return nil, err
	}
	for i := 0; i < l.N; i++ {
		failed := l.Errors != nil && l.Errors[i] != ""
		rec := schema.Record{ID: fmt.Sprintf("%s%d", idPrefix, i), Point: point, Phase: schema.PhaseMeasure, ChunksNS: []int64{}}
		if starts != nil {
			rec.SentNS = starts[i]
		}
		in, err := ingest.Int(l.InputLens[i])
		if err != nil || in < 0 {
			return nil, ingest.RecordErrorf(file, line, i, "input_lens", "not a token count: %s", l.InputLens[i])
		}
		outTok, err := ingest.Int(l.OutputLens[i])
		if err != nil || outTok < 0 {
			return nil, ingest.RecordErrorf(file, line, i, "output_lens", "not a token count: %s", l.OutputLens[i])
		}
		rec.InputTokens = in
		if rec.Orig, err = origOf(l, i, duration); err != nil {
			return nil, ingest.RecordErrorf(file, line, i, "", "%w", err)
		}
		if failed {
			rec.Status = schema.StatusError
			rec.Error = l.Errors[i]
			if len(rec.Error) > 4096 {
				rec.Error = rec.Error[:4096]
			}
			rec.EndNS = rec.SentNS
			if l.Latencies != nil {
				if v, err := ingest.NonNegNS(l.Latencies[i], ingest.Second, "latency"); err == nil {
					rec.EndNS = rec.SentNS + v
				}
			}
		} else {
			rec.Status = schema.StatusOK
			rec.OutputTokens = outTok
			if err := l.timeOK(&rec, i, file, line); err != nil {
				return nil, err
			}
		}
		out.LastNS = max(out.LastNS, rec.EndNS)
		out.Records = append(out.Records, rec)
	}
	return out, nil
}

// startOffsets is each request's start_times entry in ns since the
// earliest, nil when the lists hold no start times (every send is then 0).
func startOffsets(l *Lists, file string, line int) ([]int64, error) {
	if l.StartTimes == nil {
		return nil, nil
	}
	starts := make([]int64, l.N)
	first := int64(0)
	for i, s := range l.StartTimes {
		v, err := ingest.ToNS(s, ingest.Second)
		if err != nil {
			return nil, ingest.RecordErrorf(file, line, i, "start_times", "%w", err)
		}
		starts[i] = v
		if i == 0 || v < first {
			first = v
		}
	}
	for i := range starts {
		starts[i] -= first
	}
	return starts, nil
}

// origOf is request i's values verbatim under the tool's names, as
// Records describes.
func origOf(l *Lists, i int, duration json.Number) ([]byte, error) {
	orig := map[string]any{"ttft": l.TTFTs[i], "itl": l.ITLs[i], "input_len": l.InputLens[i], "output_len": l.OutputLens[i]}
	if l.Errors != nil {
		orig["error"] = l.Errors[i]
	}
	if l.StartTimes != nil {
		orig["start_time"] = l.StartTimes[i]
	}
	if l.Latencies != nil {
		orig["latency"] = l.Latencies[i]
	}
	if duration != "" {
		orig["duration"] = duration
	}
	return json.Marshal(orig)
}

// timeOK sets the chunks and end of rec, successful request i: ttft plus
// the cumulative gaps, ended by the latency when saved (which may not be
// shorter than the chunks, a sign of mixed units).
func (l *Lists) timeOK(rec *schema.Record, i int, file string, line int) error {
	ttft, err := ingest.NonNegNS(l.TTFTs[i], ingest.Second, "ttft")
	if err != nil {
		return ingest.RecordErrorf(file, line, i, "ttfts", "%w", err)
	}
	t := ttft
	rec.ChunksNS = append(rec.ChunksNS, t)
	for j, raw := range l.ITLs[i] {
		var g json.Number
		if err := json.Unmarshal(raw, &g); err != nil {
			return ingest.RecordErrorf(file, line, i, fmt.Sprintf("itls[%d][%d]", i, j), "not a number")
		}
		v, err := ingest.NonNegNS(g, ingest.Second, "itl")
		if err != nil {
			return ingest.RecordErrorf(file, line, i, fmt.Sprintf("itls[%d][%d]", i, j), "%w", err)
		}
		t += v
		rec.ChunksNS = append(rec.ChunksNS, t)
	}
	rec.EndNS = rec.SentNS + t
	if l.Latencies != nil {
		lat, err := ingest.NonNegNS(l.Latencies[i], ingest.Second, "latency")
		if err != nil {
			return ingest.RecordErrorf(file, line, i, "latencies", "%w", err)
		}
		if lat+int64(len(rec.ChunksNS)) < t {
			return ingest.RecordErrorf(file, line, i, "latencies", "latency %d ns is shorter than ttft + Σitl = %d ns (mixed units?)", lat, t)
		}
		rec.EndNS = rec.SentNS + max(lat, t)
	}
	return nil
}

var statRe = regexp.MustCompile(`^(mean|median|std|p[0-9]+(?:\.[0-9]+)?)_([a-z0-9_]+)_ms$`)

// DistClaims adds the distribution claims of o: fields named
// <stat>_<metric>_ms, with metric mapped to a replay distribution by
// dists; reasons marks distributions that cannot be recomputed.
func DistClaims(c *ingest.ClaimSet, o Object, file, point string, dists map[string]string, reasons map[string]string) {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := statRe.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		dist, ok := dists[m[2]]
		if !ok {
			continue
		}
		stat := m[1]
		switch stat {
		case "mean", "std", "median":
			stat = ingest.StatKeys[stat]
		default:
			stat = "p" + strings.ReplaceAll(strings.TrimPrefix(stat, "p"), ".", "")
		}
		c.AddNotRecomputable(file, point, dist+"."+stat, k, o.Number(k), ingest.Millisecond, reasons[m[2]])
	}
}
