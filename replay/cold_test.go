package replay

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// warm builds a warmup record of point p.
func warm(id string, sent, end int64, status string, chunks ...int64) *schema.Record {
	return &schema.Record{ID: id, Point: "p", Phase: schema.PhaseWarmup, SentNS: sent, EndNS: end, ChunksNS: chunks, OutputTokens: int64(len(chunks)), Status: status}
}

func TestColdColumnFromWarmupRecords(t *testing.T) {
	measured := req(10_000, 2, 100, 200)
	for _, tc := range []struct {
		name     string
		m        func(*schema.Manifest)
		recs     []*schema.Record
		wantNil  bool
		requests int64
		ok       int64
		firstID  string
		first    int64 // -1: null
		firstWhy string
		duration int64 // -1: null; -2: MaxInt64 − MinInt64
		ttftN    int64
		ttftMax  int64
		e2eMean  *big.Rat
	}{
		{name: "no warmup records: no cold column", recs: []*schema.Record{measured}, wantNil: true},
		{
			name: "first request is the earliest sent, not the first in the file",
			recs: []*schema.Record{
				warm("w1", 2_000, 2_900, schema.StatusOK, 300, 900),
				warm("w0", 1_000, 1_800, schema.StatusOK, 700, 800),
				warm("w2", 3_000, 4_500, schema.StatusOK, 50, 1_500),
				measured,
			},
			requests: 3, ok: 3, firstID: "w0", first: 700, duration: 4_500 - 1_000,
			ttftN: 3, ttftMax: 700, e2eMean: big.NewRat(900+800+1_500, 3),
		},
		{
			name: "first request failed: its ttft is null with why; the others still count",
			recs: []*schema.Record{
				warm("w0", 1_000, 6_000, schema.StatusTimeout),
				warm("w1", 2_000, 2_500, schema.StatusOK, 100, 500),
				measured,
			},
			requests: 2, ok: 1, firstID: "w0", first: -1, firstWhy: "ended timeout", duration: 5_000,
			ttftN: 1, ttftMax: 100, e2eMean: big.NewRat(500, 1),
		},
		{
			name: "first request ok without content",
			recs: []*schema.Record{
				warm("w0", 1_000, 1_200, schema.StatusOK),
				warm("w1", 1_100, 1_300, schema.StatusOK, 100, 200),
			},
			requests: 2, ok: 2, firstID: "w0", first: -1, firstWhy: "without content", duration: 300,
			ttftN: 1, ttftMax: 100, e2eMean: big.NewRat(200, 1),
		},
		{
			name: "sent_ns not measured: the duration is null, the ttft is not",
			m: func(m *schema.Manifest) {
				m.Provenance = &schema.Provenance{Fields: map[string]schema.FieldOrigin{schema.FieldSent: {Status: schema.FieldAbsent, How: "every request at 0"}}}
			},
			recs:     []*schema.Record{warm("w0", 0, 900, schema.StatusOK, 400, 900), measured},
			requests: 1, ok: 1, firstID: "w0", first: 400, duration: -1,
			ttftN: 1, ttftMax: 400, e2eMean: big.NewRat(900, 1),
		},
		{
			name:     "non-streaming boundary: no first token is timed",
			m:        func(m *schema.Manifest) { m.Client.Boundary = schema.BoundaryNonStreaming },
			recs:     []*schema.Record{warm("w0", 1_000, 1_900, schema.StatusOK, 900, 900), measured},
			requests: 1, ok: 1, firstID: "w0", first: -1, firstWhy: "non-streaming", duration: 900,
			ttftN: 0, e2eMean: big.NewRat(900, 1),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := manifest()
			m.Load.Warmup = schema.Warmup{Requests: 1}
			if tc.m != nil {
				tc.m(m)
			}
			res := mustReplay(t, &memRun{m: m, recs: tc.recs}, Options{})
			c := res.Point("p", 0).Cold
			if tc.wantNil {
				if c != nil {
					t.Fatalf("cold column %+v for a point without warmup", c)
				}
				return
			}
			if c == nil {
				t.Fatal("no cold column")
			}
			if c.Requests != tc.requests || c.OK != tc.ok || c.FirstID != tc.firstID {
				t.Errorf("requests %d ok %d first %q, want %d %d %q", c.Requests, c.OK, c.FirstID, tc.requests, tc.ok, tc.firstID)
			}
			if tc.first < 0 {
				if !c.FirstTTFTNS.IsNull() || !strings.Contains(c.NullReasons["first_ttft_ns"], tc.firstWhy) {
					t.Errorf("first ttft %v (%q), want null saying %q", c.FirstTTFTNS.Rat(), c.NullReasons["first_ttft_ns"], tc.firstWhy)
				}
			} else {
				ratEq(t, "first ttft", c.FirstTTFTNS, big.NewRat(tc.first, 1))
			}
			if tc.duration == -2 {
				want := new(big.Rat).SetInt(new(big.Int).Sub(big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64)))
				ratEq(t, "duration", c.DurationNS, want)
			} else if tc.duration < 0 {
				if !c.DurationNS.IsNull() || c.NullReasons["duration_ns"] == "" {
					t.Errorf("duration %v, want null with a reason", c.DurationNS.Rat())
				}
			} else {
				ratEq(t, "duration", c.DurationNS, big.NewRat(tc.duration, 1))
			}
			if c.TTFT.N != tc.ttftN {
				t.Errorf("ttft n %d, want %d", c.TTFT.N, tc.ttftN)
			}
			if tc.ttftN > 0 {
				ratEq(t, "ttft max", c.TTFT.Max, big.NewRat(tc.ttftMax, 1))
			}
			ratEq(t, "e2e mean", c.E2E.Mean, tc.e2eMean)
			// The measured column never sees a warmup record.
			if p := res.Point("p", 0); p.Counts.Sent > 1 || p.Counts.Warmup != tc.requests {
				t.Errorf("measured counts %+v", p.Counts)
			}
		})
	}
}

func TestColdColumnCarriesThePointsPrefixCacheState(t *testing.T) {
	m := manifest()
	m.Load.Warmup = schema.Warmup{Requests: 1}
	recs := []*schema.Record{warm("w0", 0, 10, schema.StatusOK, 5, 10), req(20, 2, 5, 10)}
	if c := mustReplay(t, &memRun{m: m, recs: recs}, Options{}).Point("p", 0).Cold; c.PrefixCache != "" || c.PrefixCacheSource != "" {
		t.Errorf("state %q/%q from a manifest stating none", c.PrefixCache, c.PrefixCacheSource)
	}
	m.ServerState = &schema.ServerState{Points: []schema.PointState{{Point: "p", Repeat: 0, PrefixCache: schema.PrefixCacheEmpty, PrefixCacheSource: schema.StateDeclared}}}
	if c := mustReplay(t, &memRun{m: m, recs: recs}, Options{}).Point("p", 0).Cold; c.PrefixCache != schema.PrefixCacheEmpty || c.PrefixCacheSource != schema.StateDeclared {
		t.Errorf("state %q/%q, want empty/declared", c.PrefixCache, c.PrefixCacheSource)
	}
}

// TestPointCacheIsMeasuredFromTheRecords: a point's Cache sums the cached
// prompt tokens the engine reported for its ok requests of both phases,
// its first request being the earliest sent; nil when no answer
// reported any.
func TestPointCacheIsMeasuredFromTheRecords(t *testing.T) {
	cached := func(r *schema.Record, in, n int64) *schema.Record {
		r.InputTokens, r.Server = in, &schema.ServerReport{CachedTokens: &n}
		return r
	}
	w := cached(warm("w0", 1_000, 1_800, schema.StatusOK, 700, 800), 40, 1)
	m1 := cached(req(10_000, 2, 100, 200), 40, 39)
	m1.ID = "m1"
	failed := cached(req(11_000, 2, 100, 200), 40, 40)
	failed.ID, failed.Status = "m2", schema.StatusError
	res := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{m1, w, failed}}, Options{})
	want := schema.CacheUse{Requests: 2, PromptTokens: 80, CachedTokens: 40, FirstCached: 1, FirstPrompt: 40}
	if c := res.Point("p", 0).Cache; c == nil || *c != want || c.MeasuredState() != schema.PrefixCacheEmpty {
		t.Errorf("cache %+v, want %+v (empty)", c, want)
	}
	if c := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{req(10_000, 2, 100, 200)}}, Options{}).Point("p", 0).Cache; c != nil {
		t.Errorf("cache %+v from records reporting none", c)
	}
}
