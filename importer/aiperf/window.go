package aiperf

import (
	"fmt"
	"math"
	"time"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// A time-based run's rates (AIPerf 1.x summaries, --benchmark-duration)
// are not over benchmark_duration (last response − first request): AIPerf
// divides request, output-token, total-token and input-token throughput
// and goodput by the observation window of the profiling phase, the
// phase's start to the return of its last credit (grace period included),
// which it writes as the summary's start_time and end_time
// (ai-dynamo/aiperf src/aiperf/metrics/metric_dicts.py
// MetricResultsDict.observation_duration @ 0fec57a; the window is the
// profiling ExportContext's start_ns and requests_end_ns in
// src/aiperf/records/records_manager.py @ 05123db, the same two values
// ProfileResults and so the summary's start_time/end_time carry). A
// count-based run's rates are over benchmark_duration: a real 0.10.0
// export divides by it to the last digit (testdata/fixtures/aiperf). The
// 2025 development schema ("records" block, AIPerf 0.1.x) divides every
// run by benchmark_duration (aiperf/metrics/types/request_throughput_metric.py
// @ db4f639): a time-based run there only drops the requests that end after
// the duration plus the grace period.

// phaseWindowHow names the window in provenance.windows.
const phaseWindowHow = "end_time − start_time of AIPerf's summary: the profiling phase of a time-based run, grace period included, which AIPerf divides its rates by (written to the microsecond)"

// phaseTimeSlack bounds how far the phase window AIPerf divided by can lie
// from end_time − start_time as it wrote them: each is
// datetime.fromtimestamp(ns / 1e9), a float64 of the epoch seconds
// (ulp 2.4e-7 s in this century) rounded to the microsecond.
const phaseTimeSlack = 2 * time.Microsecond

// summaryTimeLayouts are the forms of start_time/end_time: Python's
// isoformat of a naive local datetime (no fraction when it is zero), or
// with an offset.
var summaryTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"}

func parseSummaryTime(s string) (time.Time, bool) {
	for _, l := range summaryTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// phaseWindow returns the window a summary's rates are over when it is not
// benchmark_duration: end_time − start_time of a time-based run in a 1.x
// summary (0 otherwise). span is the records' span (first start to last
// end, ns): the phase holds every request, so a shorter window is the
// summary contradicting its records.
func phaseWindow(s *Summary, name string, span int64) (int64, error) {
	if s == nil || s.SchemaVersion == "" || s.load().durationNS <= 0 {
		return 0, nil
	}
	start, ok1 := parseSummaryTime(s.StartTime)
	end, ok2 := parseSummaryTime(s.EndTime)
	switch {
	case !ok1:
		return 0, ingest.Errorf(name, "start_time %q: not an ISO 8601 time; a time-based run's rates are over end_time − start_time", s.StartTime)
	case !ok2:
		return 0, ingest.Errorf(name, "end_time %q: not an ISO 8601 time; a time-based run's rates are over end_time − start_time", s.EndTime)
	}
	w := end.Sub(start)
	if w <= 0 {
		return 0, ingest.Errorf(name, "end_time %s is not after start_time %s", s.EndTime, s.StartTime)
	}
	if int64(w+phaseTimeSlack) < span {
		return 0, ingest.Errorf(name, "end_time − start_time (%s) is shorter than the span of the records (%s): the profiling phase holds every request", schema.Duration(w), schema.Duration(span))
	}
	return int64(w), nil
}

// windowTolerance is the claims' relative tolerance when the rates are over
// a phase window known only to phaseTimeSlack: at least ingest.Tolerance,
// at most schema.MaxClaimTolerance.
func windowTolerance(w int64) float64 {
	t := float64(phaseTimeSlack) / float64(w)
	return min(max(t, ingest.Tolerance), schema.MaxClaimTolerance)
}

func phaseWindowNote(w int64) string {
	return fmt.Sprintf("rates (request, output-token, total-token throughput, goodput) over the profiling phase, end_time − start_time = %s, grace period included, not over benchmark_duration; claims checked to ±%s on that window", schema.Duration(w), phaseTimeSlack)
}

// checkInputRate requires input_token_throughput, which the replay contract
// has no scalar for, to be what AIPerf computes from the records: the valid
// records' input tokens (isl, its total_isl) over the rates' window — the
// phase window w of a time-based run, else benchmark_duration, whose claim
// replay checks — within tol. A summary stating another value contradicts
// its own records, and the import (hence verify's re-derivation) fails.
func checkInputRate(s *Summary, name string, isl, w int64, tol float64) error {
	if s == nil {
		return nil
	}
	st, ok := s.Metrics["input_token_throughput"]
	if !ok {
		return nil
	}
	got, err := st.Values["avg"].Float64()
	if err != nil {
		return ingest.RecordErrorf(name, 0, -1, "input_token_throughput.avg", "not a number: %s", st.Values["avg"])
	}
	dur := float64(w) / 1e9
	src := "end_time − start_time"
	if w <= 0 {
		bd, ok := s.Metrics["benchmark_duration"]
		u, okU := unitNS(bd.Unit)
		d, err := bd.Values["avg"].Float64()
		if !ok || !okU || err != nil || d <= 0 {
			return ingest.RecordErrorf(name, 0, -1, "input_token_throughput", "stated without a benchmark_duration it is over")
		}
		dur, src = d*float64(u)/1e9, "benchmark_duration"
	}
	want := float64(isl) / dur
	if math.Abs(got-want) > tol*math.Abs(want) {
		return ingest.RecordErrorf(name, 0, -1, "input_token_throughput.avg", "%s is not the valid records' %d input tokens ÷ %s (%s s) = %s", digits.Shortest(got), isl, src, digits.Shortest(dur), digits.Shortest(want))
	}
	return nil
}
