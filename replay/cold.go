// The cold column: a point's warmup records, reported apart from its
// measured (warmed) ones.

package replay

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// ColdResult is the cold column of one point × repeat: what its warmup
// records (phase "warmup") show about the server before the measured
// requests, which they never enter. A key of NullReasons ("first_ttft_ns",
// "duration_ns", "ttft_ns", "e2e_ns") says why that value is null.
type ColdResult struct {
	// Requests counts the warmup records, OK those that ended ok.
	Requests, OK int64
	// FirstID is the id of the warmup request sent first (the earliest
	// sent_ns; the first in file order among equal ones).
	FirstID string
	// FirstTTFTNS is that request's time to first token, in ns: the
	// first request the server answered in this point × repeat.
	FirstTTFTNS Value
	// DurationNS is the warmup's span: from its first send to the last
	// end (end_ns) of any warmup request, in ns.
	DurationNS Value
	// TTFT and E2E are the distributions over the warmup requests that
	// ended ok with content, as the measured ones are computed.
	TTFT, E2E   Dist
	NullReasons map[string]string
	// PrefixCache and PrefixCacheSource are the point's prefix-cache
	// state when its first request was sent and who says so
	// (manifest.server_state: reset, declared, or "" with unknown); both
	// "" when the manifest states none.
	PrefixCache, PrefixCacheSource string
	// AfterProbe, on the run's first point × repeat, is the manifest's
	// NotePreflight: an unrecorded probe was answered before this warmup,
	// so a cold start went into it ("" otherwise).
	AfterProbe string
}

// addPreflight marks the cold column of the run's first point × repeat
// when capture's preflight probe came before it (schema.NotePreflight).
func addPreflight(m *schema.Manifest, results []*PointResult) {
	note := m.Notes[schema.NotePreflight]
	if note == "" || len(results) == 0 || results[0].Cold == nil {
		return
	}
	results[0].Cold.AfterProbe = note
}

// addServerState copies each point's prefix-cache state from
// manifest.server_state into its cold column.
func addServerState(m *schema.Manifest, results []*PointResult) {
	if m.ServerState == nil {
		return
	}
	for _, p := range results {
		if p.Cold == nil {
			continue
		}
		for _, s := range m.ServerState.Points {
			if s.Point == p.Point && s.Repeat == p.Repeat {
				p.Cold.PrefixCache, p.Cold.PrefixCacheSource = s.PrefixCache, s.PrefixCacheSource
				break
			}
		}
	}
}

// coldGroup accumulates the warmup records of one point × repeat.
type coldGroup struct {
	requests, ok    int64
	haveFirst       bool
	firstSent       int64
	firstID         string
	firstStatus     string
	firstTTFT       int64
	firstHasContent bool
	maxEnd          int64
	ttft, e2e       intSamples
}

func (c *coldGroup) add(rec *schema.Record) {
	c.requests++
	if !c.haveFirst || rec.SentNS < c.firstSent {
		c.haveFirst, c.firstSent, c.firstID, c.firstStatus = true, rec.SentNS, rec.ID, rec.Status
		c.firstHasContent = len(rec.ChunksNS) > 0
		if c.firstHasContent {
			c.firstTTFT = rec.ChunksNS[0]
		}
	}
	if c.requests == 1 || rec.EndNS > c.maxEnd {
		c.maxEnd = rec.EndNS
	}
	if rec.Status != schema.StatusOK {
		return
	}
	c.ok++
	if k := len(rec.ChunksNS); k > 0 {
		c.ttft.add(rec.ChunksNS[0])
		c.e2e.add(rec.ChunksNS[k-1])
	}
}

// finish computes the cold column. untimed is the non-streaming
// boundary; prov is the manifest's provenance; pr holds the measured
// column's null reasons, which the same record fields decide here.
func (c *coldGroup) finish(untimed bool, prov *schema.Provenance, pr *PointResult) *ColdResult {
	out := &ColdResult{Requests: c.requests, OK: c.ok, FirstID: c.firstID, FirstTTFTNS: Null, DurationNS: Null,
		TTFT: intDist(&c.ttft), E2E: intDist(&c.e2e)}
	null := func(k, why string) {
		if out.NullReasons == nil {
			out.NullReasons = map[string]string{}
		}
		out.NullReasons[k] = why
	}
	ttftWhy := pr.NullReasons[schema.MetricTTFT]
	if untimed && ttftWhy == "" {
		ttftWhy = "boundary non-streaming: a response arrives whole, so no first token is timed"
	}
	switch {
	case ttftWhy != "":
		null("first_ttft_ns", ttftWhy)
		null(schema.MetricTTFT, ttftWhy)
		out.TTFT = emptyDist()
	case c.firstStatus != schema.StatusOK:
		null("first_ttft_ns", fmt.Sprintf("the first warmup request (%s) ended %s", c.firstID, c.firstStatus))
	case !c.firstHasContent:
		null("first_ttft_ns", fmt.Sprintf("the first warmup request (%s) ended ok without content", c.firstID))
	default:
		out.FirstTTFTNS = Int(c.firstTTFT)
	}
	if why := pr.NullReasons[schema.MetricE2E]; why != "" {
		null(schema.MetricE2E, why)
		out.E2E = emptyDist()
	}
	var rs []string
	for _, f := range []string{schema.FieldSent, schema.FieldEnd} {
		if o := prov.Field(f); !o.Usable() {
			rs = append(rs, f+" not measured by the source ("+o.How+")")
		}
	}
	if len(rs) > 0 {
		null("duration_ns", strings.Join(rs, "; "))
	} else {
		// In big integers: a hostile run's times may be any int64.
		d := new(big.Int).Sub(big.NewInt(c.maxEnd), big.NewInt(c.firstSent))
		out.DurationNS = Exact(new(big.Rat).SetInt(d))
	}
	return out
}
