package replay

import (
	"context"
	"io"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// memRun is an in-memory schema.Run for tests.
type memRun struct {
	m    *schema.Manifest
	c    *schema.Claims
	recs []*schema.Record
}

func (r *memRun) Manifest() *schema.Manifest { return r.m }
func (r *memRun) Claims() *schema.Claims     { return r.c }
func (r *memRun) OpenRecords() (schema.RecordIterator, error) {
	return &memIter{recs: r.recs}, nil
}

type memIter struct {
	recs []*schema.Record
	i    int
}

func (it *memIter) Next() (*schema.Record, error) {
	if it.i >= len(it.recs) {
		return nil, io.EOF
	}
	it.i++
	return it.recs[it.i-1], nil
}
func (it *memIter) Close() error { return nil }

func manifest(points ...schema.Point) *schema.Manifest {
	if len(points) == 0 {
		points = []schema.Point{{Name: "p"}}
	}
	return &schema.Manifest{Schema: schema.ManifestSchemaV1, Load: schema.Load{Mode: schema.ModeRate, Points: points, Repeats: 1}}
}

func ptr[T any](v T) *T { return &v }

// req builds an ok request sent at sent with chunks (relative) and n tokens.
func req(sent int64, n int64, chunks ...int64) *schema.Record {
	return &schema.Record{ID: "r", Point: "p", Phase: schema.PhaseMeasure, SentNS: sent, EndNS: sent + chunks[len(chunks)-1], ChunksNS: chunks, OutputTokens: n, InputTokens: 10, Status: schema.StatusOK}
}

func mustReplay(t *testing.T, run schema.Run, o Options) *Result {
	t.Helper()
	r, err := Replay(context.Background(), run, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ratEq(t *testing.T, what string, v Value, want *big.Rat) {
	t.Helper()
	if v.IsNull() || v.Rat() == nil || v.Rat().Cmp(want) != 0 {
		t.Errorf("%s = %v, want %v", what, v.Rat(), want)
	}
}

func TestPercentileVectors(t *testing.T) {
	// py_vectors: TTFT vector A, 1..100, 1..4, 10..50 (nearest rank).
	cases := []struct {
		xs   []int64
		want map[string]int64
	}{
		{[]int64{120000000, 121000003, 122000006, 123000009, 124000012, 125000015, 126000018, 127000021, 128000024, 129000027, 950000001},
			map[string]int64{"p50": 125000015, "p90": 129000027, "p99": 950000001}},
		{seq(1, 100), map[string]int64{"p50": 50, "p90": 90, "p99": 99}},
		{seq(1, 4), map[string]int64{"p50": 2, "p90": 4, "p99": 4}},
		{[]int64{10, 20, 30, 40, 50}, map[string]int64{"p50": 30, "p90": 50, "p99": 50}},
	}
	for _, c := range cases {
		var s intSamples
		for _, x := range c.xs {
			s.add(x)
		}
		d := intDist(&s)
		for k, want := range c.want {
			v, _ := d.Field(k)
			ratEq(t, k, v, big.NewRat(want, 1))
		}
	}
	// numpy linear on vector A: 867900003.6000003.
	a := []float64{120000000, 121000003, 122000006, 123000009, 124000012, 125000015, 126000018, 127000021, 128000024, 129000027, 950000001}
	if got := npPercentileLinear(a, 99); got != 867900003.6000003 {
		t.Errorf("numpy p99 = %v", got)
	}
	if got := npPercentileLinear(fseq(1, 100), 90); got != 90.10000000000001 {
		t.Errorf("numpy p90 1..100 = %v", got)
	}
	if got := npPercentileLinear([]float64{1, 2, 3, 4}, 99); got != 3.9699999999999998 {
		t.Errorf("numpy p99 1..4 = %v", got)
	}
	// MLPerf floor index: 1..100 p50 → 51, p99 → 100.
	var s intSamples
	for _, x := range seq(1, 100) {
		s.add(x)
	}
	d := mlperfDist(&s)
	ratEq(t, "mlperf p50", pct(d, "p50"), big.NewRat(51, 1))
	ratEq(t, "mlperf p99", pct(d, "p99"), big.NewRat(100, 1))
}

func seq(a, b int64) []int64 {
	var out []int64
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func fseq(a, b int64) []float64 {
	var out []float64
	for i := a; i <= b; i++ {
		out = append(out, float64(i))
	}
	return out
}

func TestLargeSamplesSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s intSamples
	var all []int64
	for range 300000 {
		x := rng.Int64N(1 << 34)
		if rng.IntN(50) == 0 {
			x = -x
		}
		s.add(x)
		all = append(all, x)
	}
	sorted := s.sorted()
	for _, r := range []int64{1, 2, 1000, 150000, 299999, 300000} {
		if got := s.ranks([]int64{r})[0]; got != sorted[r-1] {
			t.Fatalf("rank %d: got %d want %d", r, got, sorted[r-1])
		}
	}
	_ = all
}

func TestMedianCIVectors(t *testing.T) {
	// go_vectors.txt (real go-moremath output).
	want := map[int][3]int{2: {0, 3}, 3: {0, 4}, 4: {0, 5}, 5: {0, 5}, 6: {1, 6}, 7: {1, 7}, 8: {1, 7}, 9: {2, 8}, 10: {2, 9}, 11: {2, 9}, 12: {3, 10}}
	conf := map[int]string{5: "0.96875", 6: "0.96875", 7: "0.984375", 8: "0.9609375", 10: "0.978515625"}
	for n, w := range want {
		ci := MedianCI(n, CIConfidence)
		if ci.LoOrder != w[0] || ci.HiOrder != w[1] {
			t.Errorf("n=%d: orders %d,%d want %d,%d", n, ci.LoOrder, ci.HiOrder, w[0], w[1])
		}
		if c, ok := conf[n]; ok && ci.Confidence.FloatString(9) != new(big.Rat).SetFrac64(0, 1).FloatString(0) {
			r, _ := new(big.Rat).SetString(c)
			if ci.Confidence.Cmp(r) != 0 {
				t.Errorf("n=%d: confidence %s want %s", n, ci.Confidence.FloatString(9), c)
			}
		}
	}
	vals := func(xs ...int64) []Value {
		var out []Value
		for _, x := range xs {
			out = append(out, Int(x))
		}
		return out
	}
	s := SummarizeValues(vals(101, 99, 103), CIConfidence)
	ratEq(t, "median", s.Median, big.NewRat(101, 1))
	if !s.CILow.IsNull() || !s.CIHigh.IsNull() || len(s.Warnings) != 1 || s.Warnings[0] != "need >= 6 samples for confidence interval at level 0.95" {
		t.Errorf("3 samples: %+v", s)
	}
	s = SummarizeValues(vals(100, 102, 98, 101, 99), CIConfidence)
	ratEq(t, "median5", s.Median, big.NewRat(100, 1))
	ratEq(t, "hi5", s.CIHigh, big.NewRat(102, 1))
	s = SummarizeValues(vals(100, 102, 98, 101, 99, 103), CIConfidence)
	ratEq(t, "median6", s.Median, big.NewRat(201, 2))
	ratEq(t, "lo6", s.CILow, big.NewRat(98, 1))
	ratEq(t, "hi6", s.CIHigh, big.NewRat(103, 1))
	s = SummarizeValues(vals(100, 102, 98, 101, 99, 103, 97, 104, 96, 105), CIConfidence)
	ratEq(t, "lo10", s.CILow, big.NewRat(97, 1))
	ratEq(t, "hi10", s.CIHigh, big.NewRat(104, 1))
	if len(s.Warnings) != 0 {
		t.Errorf("10 samples warned: %v", s.Warnings)
	}
}

func TestEarlyStoppingVectors(t *testing.T) {
	for tc, want := range map[int64]int64{0: 459, 1: 662, 2: 838, 3: 1001, 5: 1307, 10: 2010, 20: 3304} {
		if got := EarlyStopMinQueries(tc); got != want {
			t.Errorf("t=%d: %d want %d", tc, got, want)
		}
	}
}

func TestDistServeAttainmentVector(t *testing.T) {
	ms := int64(1e6)
	// (ttft, tpot, n): (150,40,100) ✓ (300,60,50) ✗ (250,—,1) ✓ (100,50,10) ✓ (260,30,20) ✗.
	mk := func(sent, ttft, tpot, n int64) *schema.Record {
		return req(sent, n, ttft*ms, ttft*ms+tpot*ms*(n-1))
	}
	recs := []*schema.Record{mk(0, 150, 40, 100), mk(0, 300, 60, 50), mk(0, 250, 0, 1), mk(0, 100, 50, 10), mk(0, 260, 30, 20)}
	run := &memRun{m: manifest(), recs: recs}
	pass := &SLOSpec{TTFTNS: ptr(250 * ms), TPOTNS: ptr(50 * ms), OneToken: "pass"}
	r := mustReplay(t, run, Options{SLO: pass})
	ratEq(t, "attainment pass", r.Results[0].Scalars["slo_attainment"], big.NewRat(3, 5))
	fail := *pass
	fail.OneToken = "fail"
	r = mustReplay(t, run, Options{SLO: &fail})
	ratEq(t, "attainment fail", r.Results[0].Scalars["slo_attainment"], big.NewRat(2, 5))
	// AIPerf rule: 1-token fails TPOT; vLLM rule: passes.
	r = mustReplay(t, run, Options{SLO: pass, Definitions: "aiperf"})
	if f, _ := r.Results[0].Scalars["slo_attainment"].Float64(); f != 0.4 {
		t.Errorf("aiperf attainment %v", f)
	}
	r = mustReplay(t, run, Options{SLO: pass, Definitions: "vllm"})
	if f, _ := r.Results[0].Scalars["slo_attainment"].Float64(); f != 0.6 {
		t.Errorf("vllm attainment %v", f)
	}
}

func TestAIPerfITLVectors(t *testing.T) {
	// start 100, responses [120, 200], 6 tokens ⇒ ITL 16; start 1000,
	// responses [1040,1080,1120], 9 tokens ⇒ 10; 1 token ⇒ none.
	recs := []*schema.Record{req(100, 6, 20, 100), req(1000, 9, 40, 80, 120), req(2000, 1, 5)}
	r := mustReplay(t, &memRun{m: manifest(), recs: recs}, Options{Definitions: "aiperf"})
	d := r.Results[0].Dists["tpot_ns"]
	if d.N != 2 {
		t.Fatalf("n = %d", d.N)
	}
	if mn, _ := d.Min.Float64(); mn != 10 {
		t.Errorf("min %v", mn)
	}
	if mx, _ := d.Max.Float64(); mx != 16 {
		t.Errorf("max %v", mx)
	}
	// Canonical agrees exactly.
	r = mustReplay(t, &memRun{m: manifest(), recs: recs}, Options{})
	ratEq(t, "tpot mean", r.Results[0].Dists["tpot_ns"].Mean, big.NewRat(13, 1))
	ratEq(t, "ttft p50", pct(r.Results[0].Dists["ttft_ns"], "p50"), big.NewRat(20, 1))
}

func TestEdgeCases(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		r := mustReplay(t, &memRun{m: manifest()}, Options{})
		if len(r.Results) != 0 {
			t.Fatal("results for an empty run")
		}
	})
	t.Run("all failed", func(t *testing.T) {
		rec := req(0, 0, 5)
		rec.Status, rec.ChunksNS = schema.StatusError, nil
		w := req(0, 3, 1, 2)
		w.Phase = schema.PhaseWarmup
		r := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{rec, w}}, Options{SLO: &SLOSpec{TTFTNS: ptr(int64(10)), OneToken: "pass"}})
		p := r.Results[0]
		if p.Counts.Sent != 1 || p.Counts.Error != 1 || p.Counts.Warmup != 1 {
			t.Errorf("counts %+v", p.Counts)
		}
		// The failed request ran 5 ns: good 0 ÷ elapsed 5 ns is 0, not null.
		ratEq(t, "window", p.Scalars["window_ns"], big.NewRat(5, 1))
		for _, k := range []string{"request_throughput", "goodput", "token_goodput", "output_token_throughput", "total_token_throughput"} {
			ratEq(t, k, p.Scalars[k], new(big.Rat))
		}
		if len(p.NullReasons) != 0 {
			t.Errorf("null reasons %v", p.NullReasons)
		}
		ratEq(t, "attainment", p.Scalars["slo_attainment"], big.NewRat(0, 1))
		if p.Dists["ttft_ns"].N != 0 || !p.Dists["ttft_ns"].Mean.IsNull() {
			t.Error("ttft defined")
		}
	})
	t.Run("one request one token zero window", func(t *testing.T) {
		r := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{req(0, 1, 0)}}, Options{})
		p := r.Results[0]
		ratEq(t, "window", p.Scalars["window_ns"], big.NewRat(0, 1))
		if !p.Scalars["request_throughput"].IsNull() {
			t.Error("rate over a zero window")
		}
		if why := p.NullReasons["request_throughput"]; why != ReasonZeroWindow {
			t.Errorf("zero window rate reason %q", why)
		}
		if p.Counts.OneToken != 1 || p.Dists["tpot_ns"].N != 0 {
			t.Error("one-token answer got a tpot")
		}
		n, _ := p.Dists["ttft_ns"].Stddev.Rounded(0)
		if n.Sign() != 0 {
			t.Error("stddev of one sample")
		}
	})
	t.Run("ties and SLO equal to latency", func(t *testing.T) {
		recs := []*schema.Record{req(0, 2, 100, 200), req(0, 2, 100, 300), req(0, 2, 200, 300), req(0, 2, 200, 400)}
		r := mustReplay(t, &memRun{m: manifest(), recs: recs}, Options{SLO: &SLOSpec{TTFTNS: ptr(int64(100)), OneToken: "pass"}})
		p := r.Results[0]
		ratEq(t, "p50 tie", pct(p.Dists["ttft_ns"], "p50"), big.NewRat(100, 1))
		ratEq(t, "good", Int(p.Counts.Good), big.NewRat(2, 1))
		ratEq(t, "stddev", p.Dists["ttft_ns"].Stddev.square(), big.NewRat(2500, 1))
	})
}

// square returns v² for a square-root value (test helper).
func (v Value) square() Value { return Exact(v.r) }

func genRun(seed uint64, n int) *memRun {
	rng := rand.New(rand.NewPCG(seed, 7))
	var recs []*schema.Record
	for i := range n {
		k := 1 + rng.IntN(20)
		t := int64(rng.IntN(1e8))
		chunks := make([]int64, k)
		for j := range chunks {
			t += int64(rng.IntN(5e7))
			chunks[j] = t
		}
		r := req(int64(i)*1e7, int64(k+rng.IntN(3)), chunks...)
		if rng.IntN(10) == 0 {
			r.Status, r.ChunksNS = schema.StatusTimeout, nil
		}
		sch := int64(i)*1e7 - int64(rng.IntN(1000))
		r.ScheduledNS = &sch
		recs = append(recs, r)
	}
	return &memRun{m: manifest(), recs: recs}
}

func TestGoodputProperties(t *testing.T) {
	for seed := range uint64(20) {
		run := genRun(seed, 200)
		var prev *big.Rat
		for _, lim := range []int64{1e7, 5e7, 1e8, 2e8, 1e9} {
			r := mustReplay(t, run, Options{SLO: &SLOSpec{TTFTNS: ptr(lim), TPOTNS: ptr(lim / 4), OneToken: "fail"}})
			p := r.Results[0]
			g, rt, a := p.Scalars["goodput"].Rat(), p.Scalars["request_throughput"].Rat(), p.Scalars["slo_attainment"].Rat()
			if g.Cmp(rt) > 0 {
				t.Fatalf("goodput %v > throughput %v", g, rt)
			}
			if a.Sign() < 0 || a.Cmp(big.NewRat(1, 1)) > 0 {
				t.Fatalf("attainment %v", a)
			}
			if prev != nil && g.Cmp(prev) < 0 {
				t.Fatalf("loosening the SLO lowered goodput")
			}
			prev = g
		}
	}
}

func TestClaimChecker(t *testing.T) {
	run := genRun(3, 50)
	res := mustReplay(t, run, Options{})
	p99, _ := pct(res.Results[0].Dists["ttft_ns"], "p99").Float64()
	run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{
		{Metric: "ttft_ns.p99", Value: p99},
		{Metric: "ttft_ns.p99", Value: p99 * 1.01},
		{Metric: "goodput", Value: 1},
		{Metric: "summary.ttft_ns.p99.median", Value: p99},
		{Metric: "request_throughput", Value: 3, NotRecomputable: "no window"},
		{Metric: "no_such", Value: 1},
	}}}}
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	// A claim marked not recomputable that the records do recompute is
	// checked (and here false); an unknown metric is a mismatch.
	want := []string{schema.ClaimMatched, schema.ClaimMismatched, schema.ClaimNotRecomputable, schema.ClaimMatched, schema.ClaimMismatched, schema.ClaimMismatched}
	for i, c := range cks {
		if c.Outcome != want[i] {
			t.Errorf("claim %d %s: %s (%s), want %s", i, c.Metric, c.Outcome, c.Reason, want[i])
		}
	}
}

func TestSmoothGoodputPaperExamples(t *testing.T) {
	ms := int64(1e6)
	// A: tokens at 100..1000 ms then 2000..2900 ms, V = 250 ms ⇒ l = −150 ms.
	var a []int64
	for i := int64(1); i <= 10; i++ {
		a = append(a, i*100*ms)
	}
	for i := int64(0); i < 10; i++ {
		a = append(a, 2000*ms+i*100*ms)
	}
	// B: 100, 200, then 1200..2900 ms ⇒ l = +450 ms.
	b := []int64{100 * ms, 200 * ms}
	for i := int64(0); i < 18; i++ {
		b = append(b, 1200*ms+i*100*ms)
	}
	sp := &SmoothParams{Alpha: big.NewRat(5, 2), VNS: 250 * ms, F: "linear", LNS: 900 * ms}
	ra := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{req(0, 20, a...)}}, Options{Smooth: sp})
	// l ≤ 0 ⇒ benefit 20 over a 2.9 s window.
	ratEq(t, "smooth A", ra.Results[0].Scalars["smooth_goodput"], big.NewRat(20*1e9, 2900*ms))
	rb := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{req(0, 20, b...)}}, Options{Smooth: sp})
	// benefit 20 − 2.5·450/900 = 18.75.
	ratEq(t, "smooth B", rb.Results[0].Scalars["smooth_goodput"], new(big.Rat).Mul(big.NewRat(75, 4), big.NewRat(1e9, 2900*ms)))
	rn := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{req(0, 20, b...)}}, Options{})
	if !rn.Results[0].Scalars["smooth_goodput"].IsNull() {
		t.Error("smooth goodput without parameters")
	}
}

func TestCapacityIsTheHighestPassingRate(t *testing.T) {
	ms := int64(1e6)
	m := manifest(schema.Point{Name: "a", Rate: 1}, schema.Point{Name: "b", Rate: 2}, schema.Point{Name: "c", Rate: 3})
	var recs []*schema.Record
	add := func(pt string, good, bad int) {
		for range good {
			r := req(0, 2, 10*ms, 20*ms)
			r.Point = pt
			recs = append(recs, r)
		}
		for range bad {
			r := req(0, 2, 900*ms, 950*ms)
			r.Point = pt
			recs = append(recs, r)
		}
	}
	add("a", 10, 0)
	add("b", 8, 2)
	add("c", 5, 5)
	r := mustReplay(t, &memRun{m: m, recs: recs}, Options{SLO: &SLOSpec{TTFTNS: ptr(100 * ms), OneToken: "pass"}})
	// (1, 1.0) passes, (2, 0.8) fails: capacity is the highest passing
	// rate, 1 (no interpolation: the same rule as decide).
	ratEq(t, "capacity", r.Capacity.Rate, big.NewRat(1, 1))
	ratEq(t, "max passing", r.Capacity.MaxPassingRate, big.NewRat(1, 1))
	// Every rate passes at a 0.5 target: not bounded by the test.
	r = mustReplay(t, &memRun{m: m, recs: recs}, Options{SLO: &SLOSpec{TTFTNS: ptr(100 * ms), OneToken: "pass"}, AttainmentTarget: big.NewRat(1, 2)})
	if !r.Capacity.Rate.IsNull() || !strings.Contains(r.Capacity.NullReason, "≥ 3.000 req/s, never crossed") {
		t.Errorf("never crossed: %v %q", r.Capacity.Rate, r.Capacity.NullReason)
	}
	// No rate passes at a target of 1 except a: a passes. At 1 with a bad too: none.
	add("a", 0, 1)
	r = mustReplay(t, &memRun{m: m, recs: recs}, Options{SLO: &SLOSpec{TTFTNS: ptr(100 * ms), OneToken: "pass"}, AttainmentTarget: big.NewRat(1, 1)})
	if !r.Capacity.Rate.IsNull() || !strings.Contains(r.Capacity.NullReason, "no tested rate meets") {
		t.Errorf("none: %v %q", r.Capacity.Rate, r.Capacity.NullReason)
	}
}

// pct returns a percentile of d by key.
func pct(d Dist, key string) Value {
	v, _ := d.Field(key)
	return v
}

// A number claimed for a value the records leave undefined (a latency
// percentile of a point where no request succeeded) is not borne out by
// the evidence: it is a mismatch, not "not recomputable" (which verify
// accepts with a warning). Undefined because of a missing SLO stays not
// recomputable.
func TestClaimOfAnUndefinedValueIsAMismatch(t *testing.T) {
	run := genRun(3, 20)
	for _, r := range run.recs {
		r.Status, r.Error, r.ChunksNS, r.OutputTokens = schema.StatusError, "boom", nil, 0
	}
	run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{
		{Metric: "ttft_ns.p99", Value: 5e7},
		{Metric: "request_throughput", Value: 100},
		{Metric: "goodput", Value: 1},
		{Metric: "counts.error", Value: 20},
	}}}}
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schema.ClaimMismatched, schema.ClaimMismatched, schema.ClaimNotRecomputable, schema.ClaimMatched}
	if len(cks) != len(want) {
		t.Fatalf("%d checks", len(cks))
	}
	for i, c := range cks {
		if c.Outcome != want[i] {
			t.Errorf("claim %d %s: %s (%s), want %s", i, c.Metric, c.Outcome, c.Reason, want[i])
		}
	}
}

// TestClaimsCannotExemptThemselves: "not_recomputable" with a false value
// is checked when the records determine the metric; it stays unverified
// only when a field the metric needs was not measured; unknown metric
// names (including near misses) are mismatches here and validation
// errors in schema.ValidateClaims.
func TestClaimsCannotExemptThemselves(t *testing.T) {
	run := genRun(3, 20)
	prov := &schema.Provenance{}
	prov.Set(schema.FieldChunks, schema.FieldAbsent, "only first and last chunk stored")
	run.m.Provenance = prov
	run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{
		{Metric: "counts.ok", Value: 9999, NotRecomputable: "trust me"},
		{Metric: "counts.sent", Value: 20, NotRecomputable: "trust me"},
		{Metric: "itl_ns.p99", Value: 5e6, NotRecomputable: "chunks not stored"},
		{Metric: "itl_ns.p50", Value: 5e6},
		{Metric: "summary.itl_ns.p99.median", Value: 5e6},
		{Metric: "magic_throughput", Value: 1},
		{Metric: "ttft_ns.p42", Value: 1},
		{Metric: "ttft_ns.p50 ", Value: 1},
	}}}}
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schema.ClaimMismatched, schema.ClaimMatched, schema.ClaimNotRecomputable, schema.ClaimNotRecomputable, schema.ClaimNotRecomputable,
		schema.ClaimMismatched, schema.ClaimMismatched, schema.ClaimMismatched}
	if len(cks) != len(want) {
		t.Fatalf("%d checks", len(cks))
	}
	for i, c := range cks {
		if c.Outcome != want[i] {
			t.Errorf("claim %d %s: %s (%s), want %s", i, c.Metric, c.Outcome, c.Reason, want[i])
		}
	}
	if !strings.Contains(cks[3].Reason, "chunks_ns not measured") {
		t.Errorf("reason %q does not name the unmeasured field", cks[3].Reason)
	}
	ps := schema.ValidateClaims(run.c, run.m, "claims.json")
	var bad []string
	for _, p := range ps {
		bad = append(bad, p.Field)
	}
	wantBad := []string{"points[0].metrics[5].metric", "points[0].metrics[6].metric", "points[0].metrics[7].metric"}
	if !slices.Equal(bad, wantBad) {
		t.Errorf("validation problems on %v, want %v (%v)", bad, wantBad, ps)
	}
}

// TestClaimCatalogueMatchesReplay keeps schema's claim path catalogue and
// what replay computes in step: every path of a canonical result resolves
// and is accepted, and every accepted canonical path resolves.
func TestClaimCatalogueMatchesReplay(t *testing.T) {
	run := genRun(3, 20)
	res := mustReplay(t, run, Options{MLPerf: &MLPerfLimits{}})
	p := res.Results[0]
	var paths []string
	paths = append(paths, ScalarKeys...)
	for k := range p.Scalars {
		paths = append(paths, k)
	}
	for _, k := range CountKeys {
		paths = append(paths, "counts."+k)
	}
	for d := range p.Dists {
		for _, k := range DistKeys {
			paths = append(paths, d+"."+k)
		}
	}
	for _, k := range []string{"threshold_ns", "count", "requests", "max_gap_ns"} {
		paths = append(paths, "stalls."+k)
	}
	for _, k := range []string{"valid", "ttft_p99_ns", "tpot_p99_ns", "ttft_over", "tpot_over", "ttft_min_queries", "tpot_min_queries", "queries", "duration_ns"} {
		paths = append(paths, "mlperf."+k)
	}
	for _, path := range paths {
		if err := schema.CheckClaimMetric("benchseal", path); err != nil {
			t.Errorf("replay computes %s but the catalogue rejects it: %v", path, err)
		}
		if _, ok := p.Lookup(path); !ok {
			t.Errorf("the catalogue accepts %s but replay does not resolve it", path)
		}
	}
	for _, m := range SummaryMetrics {
		if err := schema.CheckClaimMetric("benchseal", "summary."+m+".median"); err != nil {
			t.Error(err)
		}
	}
}
