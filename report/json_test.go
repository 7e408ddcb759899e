package report

import (
	"bytes"
	"context"
	"math/big"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// oddText holds what a JSON string writer may escape differently: a
// quote, a backslash, control characters with and without a short
// escape, HTML's <, > and &, U+2028 and U+2029, an invalid UTF-8 byte and
// non-ASCII text.
const oddText = "a \"q\" \\ \n\t\r\b\f\x01\x1f <b>&amp; \u2028\u2029 \xff é 字"

// allSectionsResult is smallRun's replay with every optional part of the
// replay JSON contract set on its first point and in its header, and
// oddText in each kind of string.
func allSectionsResult(t testing.TB) *replay.Result {
	t.Helper()
	r, err := replay.Replay(context.Background(), smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	r.Notes = append(r.Notes, oddText)
	r.Incomplete = &replay.Incomplete{Reason: oddText, Missing: 3}
	r.Cost = &replay.CostSpec{Currency: "EUR", PricePerHour: big.NewRat(5, 2), Text: "2.50"}
	r.Smooth = &replay.SmoothParams{Alpha: big.NewRat(1, 3), VNS: 5, F: "linear", LNS: 7}
	r.Aliases = map[string]string{"b_alias": oddText, "a_alias": "results[].ttft_ns"}
	yes, no := true, false
	p := r.Results[0]
	p.WindowSource = oddText
	p.NullReasons = map[string]string{"stalls": oddText, schema.MetricITL: "no chunks"}
	p.Cold = &replay.ColdResult{Requests: 2, OK: 1, FirstID: oddText, FirstTTFTNS: replay.Int(12), DurationNS: replay.Null,
		TTFT: p.Dists[schema.MetricTTFT], E2E: p.Dists[schema.MetricE2E], NullReasons: map[string]string{"duration_ns": oddText},
		PrefixCache: "warm", PrefixCacheSource: oddText, AfterProbe: oddText}
	p.Sessions = &replay.SessionResult{Sessions: 2, Complete: 1, ByTurn: []replay.TurnResult{{Turn: 0, Requests: 2, OK: 2, TTFT: p.Dists[schema.MetricTTFT]}, {Turn: 1, Requests: 1}},
		DurationNS: p.Dists[schema.MetricE2E], NullReasons: map[string]string{schema.MetricTTFT: oddText}}
	p.PrefixExpected = &replay.PrefixExpected{Basis: oddText, Requests: 3, PromptTokens: 300, ExpectedTokens: 100, Reported: 2, ReportedTokens: 90}
	f := 1.5
	p.Server = &replay.ServerColumn{Reason: oddText, Scrapes: 2, ClientMinusServerTTFTNS: &f}
	p.Energy = &replay.EnergyColumn{Reason: oddText, Devices: []string{oddText}}
	trend := replay.Trend{Slope: replay.Exact(big.NewRat(1, 3)), Low: replay.Int(-1), High: replay.Null, Points: 4, Reason: oddText}
	p.Overload = &replay.Overload{Loop: oddText, OfferedRate: replay.Int(2), ArrivalRate: replay.Float(1.25), OfferedShare: oddText,
		FitStartNS: 1, FitEndNS: 9, Arrivals: 4, Completions: 3, Outstanding: trend, SendLag: trend, Queue: &trend,
		Overloaded: replay.Flag{Set: &yes, Why: oddText}, GeneratorLimited: replay.Flag{Set: &no}, Reasons: map[string]string{"b": oddText, "a": "x"}}
	p.Timeline = &replay.Timeline{Shards: 2, UncertaintyNS: replay.Int(3), AnchorNS: replay.Int(1), DriftNS: replay.Int(2), Reason: oddText,
		WindowNS: replay.Interval{Low: replay.Int(1), High: replay.Int(2)}, RequestThroughput: replay.Interval{Low: replay.Null, High: replay.Float(0.5)},
		Goodput: replay.Interval{Low: replay.Exact(big.NewRat(1, 7)), High: replay.Int(1)}}
	p.MLPerf = &replay.MLPerfCheck{Valid: true, TTFTP99NS: replay.Int(5), Queries: 6, DurationNS: replay.Null, Reasons: []string{oddText}}
	q := r.Results[1]
	q.Overload = &replay.Overload{Loop: "closed", Outstanding: trend, SendLag: trend}
	q.PrefixExpected = &replay.PrefixExpected{Basis: "trace", Overflow: oddText}
	return r
}

// The replay JSON of a result with every optional part set, and with
// strings that each JSON writer escapes its own way, stays byte for byte.
func TestGoldenJSONAllSections(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, allSectionsResult(t)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "all_sections.json"), b.Bytes())
}

// largeResult is allSectionsResult with its points repeated to n.
func largeResult(b *testing.B, n int) *replay.Result {
	r := allSectionsResult(b)
	base := r.Results
	r.Results = nil
	for i := range n {
		p := *base[i%len(base)]
		p.Point = "p" + strconv.Itoa(i)
		r.Results = append(r.Results, &p)
	}
	return r
}

// BenchmarkJSON writes the replay JSON of a result of 10 points (a
// realistic run) and of 1,000.
func BenchmarkJSON(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run("points="+strconv.Itoa(n), func(b *testing.B) {
			r := largeResult(b, n)
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := JSON(&buf, r); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}
