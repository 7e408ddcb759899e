package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// AttachmentOpener is a run whose attachments replay can read (a run
// directory); the server column needs it.
type AttachmentOpener interface {
	ReadAttachment(name string) ([]byte, error)
}

// ServerColumn is the server-side column of one point × repeat, from the
// engine's own /metrics scraped before and after it
// (manifest.server_metrics). It is never merged into the client's
// columns.
type ServerColumn struct {
	// Column is nil when the scrapes cannot give one; Reason says why.
	Column *servermetrics.Column
	Reason string
	// Scrapes is how many stored scrapes the column used.
	Scrapes int
	// ClientMinusServerTTFTNS is the client's mean TTFT minus the
	// server's (Δsum/Δcount), in ns: network + client + tokenization
	// time. Nil when either mean is unknown.
	ClientMinusServerTTFTNS *float64
	// Attainment holds one entry per limit of the replay's SLO (from the
	// manifest or a --slo override); empty without an SLO.
	Attainment []ServerAttainment
	// GapReason says why ClientMinusServerTTFTNS is nil when both means
	// exist: the two means cover different requests.
	GapReason string
	// waiting holds the engine's waiting-queue gauge at each scrape, for
	// the overload test's queue trend.
	waiting []gaugeAt
}

// gaugeAt is a gauge's value at a scrape's time (run clock).
type gaugeAt struct {
	atNS int64
	v    float64
}

// ServerAttainment is, for one limit of the replay's SLO, the share of
// the server's own observations of that metric at or below the limit,
// read from the histogram delta of the point. It is exact only when the
// limit equals a bucket edge, otherwise bounded by the shares at the
// neighbouring edges. It is per metric (the histograms are not per
// request), so it is never the joint SLO attainment of the client column.
type ServerAttainment struct {
	// Metric is the SLO limit: ttft, e2e or tpot.
	Metric  string
	LimitNS int64
	// Histogram is the engine's metric it is read from ("" when none).
	Histogram string
	// Count is the number of the server's observations.
	Count float64
	// A is the attainment; valid when Reason is "".
	A servermetrics.Attainment
	// Reason says why there is no attainment.
	Reason string
}

// ServerAttainmentLabel says what a server attainment is, wherever it is
// printed.
const ServerAttainmentLabel = "share of the engine's own observations at or below the SLO limit, per limit, from its histogram: " +
	"exact only where the limit is a bucket edge, otherwise bounded by the neighbouring edges; not the joint attainment of the client column"

// ServerGapLabel names what the client − server TTFT mean difference
// holds.
const ServerGapLabel = "network + client + tokenization"

// maxScrapeRead bounds one stored scrape read by replay.
const maxScrapeRead = servermetrics.MaxScrapeBytes

// addServerColumns sets PointResult.Server for every result of a run
// whose manifest indexes server-metrics scrapes.
func addServerColumns(run schema.Run, m *schema.Manifest, slo SLOSpec, results []*PointResult) {
	sm := m.ServerMetrics
	if sm == nil {
		return
	}
	op, _ := run.(AttachmentOpener)
	for _, p := range results {
		p.Server = serverColumn(op, sm, p)
		if p.Server.Column != nil {
			p.Server.Attainment = serverAttainment(p.Server.Column, slo)
		}
	}
}

func serverColumn(op AttachmentOpener, sm *schema.ServerMetrics, p *PointResult) *ServerColumn {
	var picked []schema.Scrape
	for _, s := range sm.Scrapes {
		if s.Point == p.Point && s.Repeat == p.Repeat {
			picked = append(picked, s)
		}
	}
	absent := func(format string, a ...any) *ServerColumn {
		return &ServerColumn{Reason: fmt.Sprintf(format, a...)}
	}
	if op == nil {
		return absent("the run's attachments are not available to replay")
	}
	if len(picked) == 0 {
		return absent("no server-metrics scrape of this point and repeat")
	}
	var snaps []*servermetrics.Snapshot
	var before, after bool
	last := int64(-1)
	for _, s := range picked {
		if s.AtNS < last {
			return absent("scrapes of this point are not in time order")
		}
		last = s.AtNS
		if s.Error != "" {
			if s.When != schema.ScrapeDuring {
				return absent("the scrape %s the point failed: %s", s.When, s.Error)
			}
			continue
		}
		snap, err := readScrape(op, s)
		if err != nil {
			return absent("%v", err)
		}
		before = before || s.When == schema.ScrapeBefore
		after = after || s.When == schema.ScrapeAfter
		snaps = append(snaps, snap)
	}
	if !before || !after || picked[0].When != schema.ScrapeBefore || picked[len(picked)-1].When != schema.ScrapeAfter {
		return absent("needs a scrape before and one after the point")
	}
	var load servermetrics.Load
	if o := p.Overload; o != nil && o.loadOK {
		load = servermetrics.Load{FromNS: o.loadFromNS, ToNS: o.loadToNS}
	} else {
		load = servermetrics.NoLoad
	}
	load.IntervalNS = int64(sm.Interval)
	col, err := servermetrics.Delta("", snaps, load)
	if err != nil {
		return absent("%v", err)
	}
	out := &ServerColumn{Column: col, Scrapes: len(snaps)}
	for _, s := range snaps {
		if v, ok := s.Gauge(col.Engine, servermetrics.RoleWaiting); ok {
			out.waiting = append(out.waiting, gaugeAt{s.AtNS, v})
		}
	}
	if d, ok := p.Dists[schema.MetricTTFT]; ok && p.NullReasons[schema.MetricTTFT] == "" {
		if cm, ok := d.Mean.Float64(); ok {
			for _, h := range col.Histograms {
				if h.Role != servermetrics.RoleTTFT || h.Mean == nil {
					continue
				}
				// Means of different populations do not subtract: the
				// server counts every first token (also of requests that
				// failed later, and of other clients' requests).
				if h.Count != float64(d.N) {
					out.GapReason = fmt.Sprintf("the server observed %s first tokens, the client timed %d: the means cover different requests", digits.Decimal(h.Count), d.N)
					continue
				}
				g := cm - float64(*h.Mean*1e9)
				out.ClientMinusServerTTFTNS = &g
			}
		}
	}
	return out
}

// readScrape reads one stored scrape, checking its digest against the
// manifest's index before parsing it.
func readScrape(op AttachmentOpener, s schema.Scrape) (*servermetrics.Snapshot, error) {
	b, err := op.ReadAttachment(s.File)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.File, err)
	}
	if len(b) > maxScrapeRead {
		return nil, fmt.Errorf("scrape %s: larger than %d bytes", s.File, maxScrapeRead)
	}
	if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != s.SHA256 {
		return nil, fmt.Errorf("scrape %s: sha256 differs from manifest.server_metrics", s.File)
	}
	snap, err := servermetrics.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.File, err)
	}
	snap.AtNS = s.AtNS
	return snap, nil
}

// serverAttainment reads, for every limit of slo, the server's share of
// observations at or below it from the matching histogram of c.
func serverAttainment(c *servermetrics.Column, slo SLOSpec) []ServerAttainment {
	var out []ServerAttainment
	for _, l := range []struct {
		metric, role string
		limit        *int64
	}{{schema.SLOTTFT, servermetrics.RoleTTFT, slo.TTFTNS}, {schema.SLOE2E, servermetrics.RoleE2E, slo.E2ENS}, {schema.SLOTPOT, servermetrics.RoleTPOT, slo.TPOTNS}} {
		if l.limit == nil {
			continue
		}
		a := ServerAttainment{Metric: l.metric, LimitNS: *l.limit}
		var h *servermetrics.HistogramDelta
		for i := range c.Histograms {
			if c.Histograms[i].Role == l.role {
				h = &c.Histograms[i]
			}
		}
		switch {
		case h == nil:
			a.Reason = "no " + l.role + " histogram in the server column"
			for _, ab := range c.Absent {
				if ab.Role == l.role {
					a.Histogram, a.Reason = ab.Metric, ab.Metric+": "+ab.Reason
				}
			}
			if n, ok := servermetrics.Lookup(c.Engine, l.role); !ok {
				a.Reason = c.Engine + " exposes no " + l.role + " histogram"
			} else if a.Histogram == "" {
				a.Histogram = n.Metric
			}
		default:
			a.Histogram, a.Count = h.Metric, h.Count
			// The limit in seconds, as the bucket edges are written: an
			// edge of 0.25 is 250000000 ns exactly.
			att, ok := h.Attain(float64(*l.limit) / 1e9)
			if !ok {
				a.Reason = "the server observed no " + l.role + " in this point"
			}
			a.A = att
		}
		out = append(out, a)
	}
	return out
}
