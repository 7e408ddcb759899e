package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

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
	// GapReason says why ClientMinusServerTTFTNS is nil when both means
	// exist: the two means cover different requests.
	GapReason string
}

// ServerGapLabel names what the client − server TTFT mean difference
// holds.
const ServerGapLabel = "network + client + tokenization"

// maxScrapeRead bounds one stored scrape read by replay.
const maxScrapeRead = servermetrics.MaxScrapeBytes

// addServerColumns sets PointResult.Server for every result of a run
// whose manifest indexes server-metrics scrapes.
func addServerColumns(run schema.Run, m *schema.Manifest, results []*PointResult) {
	sm := m.ServerMetrics
	if sm == nil {
		return
	}
	op, _ := run.(AttachmentOpener)
	for _, p := range results {
		p.Server = serverColumn(op, sm, p)
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
	col, err := servermetrics.Delta("", snaps)
	if err != nil {
		return absent("%v", err)
	}
	out := &ServerColumn{Column: col, Scrapes: len(snaps)}
	if d, ok := p.Dists["ttft_ns"]; ok && p.NullReasons["ttft_ns"] == "" {
		if cm, ok := d.Mean.Float64(); ok {
			for _, h := range col.Histograms {
				if h.Role != servermetrics.RoleTTFT || h.Mean == nil {
					continue
				}
				// Means of different populations do not subtract: the
				// server counts every first token (also of requests that
				// failed later, and of other clients' requests).
				if h.Count != float64(d.N) {
					out.GapReason = fmt.Sprintf("the server observed %s first tokens, the client timed %d: the means cover different requests", strconv.FormatFloat(h.Count, 'f', -1, 64), d.N)
					continue
				}
				g := cm - *h.Mean*1e9
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
