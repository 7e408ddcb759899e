package schema

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// When a server-metrics scrape was taken relative to its point × repeat.
const (
	ScrapeBefore = "before"
	ScrapeDuring = "during"
	ScrapeAfter  = "after"
)

// ServerMetricsDir is the folder under attachments/ holding the raw
// scrapes of an engine's /metrics.
const ServerMetricsDir = "server-metrics"

// ServerMetrics indexes the raw scrapes of the engine's Prometheus
// metrics that capture stored under attachments/server-metrics/
// (manifest.server_metrics). Each scrape is kept byte for byte; replay
// derives the server column from them.
type ServerMetrics struct {
	// URL is the scraped address.
	URL string `json:"url"`
	// Interval is the period of the scrapes during a point.
	Interval Duration `json:"interval"`
	Scrapes  []Scrape `json:"scrapes"`
}

// Scrape is one stored scrape.
type Scrape struct {
	Point  string `json:"point"`
	Repeat int    `json:"repeat"`
	// When is before, during or after the point × repeat.
	When string `json:"when"`
	// AtNS is when the answer arrived, in the run's clock.
	AtNS int64 `json:"at_ns"`
	// FromNS is when the scrape's request was sent, in the run's clock
	// (nil in runs captured before it was recorded): the engine's answer
	// shows its counters at an instant between FromNS and AtNS.
	FromNS *int64 `json:"from_ns,omitempty"`
	// File is the attachment path (relative to attachments/) and SHA256
	// its digest; both empty when the scrape failed (Error says why).
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Error  string `json:"error,omitempty"`
}

var scrapeFileRE = regexp.MustCompile(`^server-metrics/[A-Za-z0-9._-]+\.prom$`)

// IsScrapeFile reports whether name is a well-formed scrape attachment
// name: server-metrics/NAME.prom, clean.
func IsScrapeFile(name string) bool {
	return scrapeFileRE.MatchString(name) && path.Clean(name) == name
}

// validateServerMetrics checks manifest.server_metrics against the load
// plan.
func validateServerMetrics(ps *problems, m *Manifest) {
	sm := m.ServerMetrics
	validateRevisionScrapes(ps, m)
	if sm == nil {
		return
	}
	if sm.URL == "" {
		ps.add("server_metrics.url", "must name the scraped address")
	}
	seen := map[string]bool{}
	// A capture states from_ns on every scrape or (older runs) on none: some
	// without it beside others with it is a deletion, which would switch off
	// the scrape-instant checks of those points.
	if with := countFromNS(sm.Scrapes); with > 0 && with < len(sm.Scrapes) {
		ps.add("server_metrics.scrapes", "%d of %d scrapes state from_ns: a capture states it on every scrape (or, before it was recorded, on none)", with, len(sm.Scrapes))
	}
	for i, s := range sm.Scrapes {
		f := fmt.Sprintf("server_metrics.scrapes[%d]", i)
		if !slices.ContainsFunc(m.Load.Points, func(pt Point) bool { return pt.Name == s.Point }) {
			ps.add(f+".point", "%q is not a declared load point", s.Point)
		}
		if s.Repeat < 0 || (m.Load.Repeats > 0 && s.Repeat >= m.Load.Repeats) {
			ps.add(f+".repeat", "must be in [0, %d), got %d", m.Load.Repeats, s.Repeat)
		}
		if !oneOf(s.When, ScrapeBefore, ScrapeDuring, ScrapeAfter) {
			ps.add(f+".when", "must be one of %s, got %q", quoteList(ScrapeBefore, ScrapeDuring, ScrapeAfter), s.When)
		}
		if s.AtNS < 0 {
			ps.add(f+".at_ns", "must not be negative, got %d", s.AtNS)
		}
		if s.FromNS != nil && (*s.FromNS < 0 || *s.FromNS > s.AtNS) {
			ps.add(f+".from_ns", "must be in [0, at_ns %d], got %d", s.AtNS, *s.FromNS)
		}
		switch {
		case s.Error != "" && (s.File != "" || s.SHA256 != ""):
			ps.add(f, "a failed scrape has no file")
		case s.Error == "" && (!scrapeFileRE.MatchString(s.File) || path.Clean(s.File) != s.File):
			ps.add(f+".file", "must be server-metrics/NAME.prom, got %q", s.File)
		case s.Error == "" && !sha256RE.MatchString(s.SHA256):
			ps.add(f+".sha256", "must be 64 lowercase hex digits")
		}
		if s.File != "" {
			if seen[s.File] {
				ps.add(f+".file", "%q is listed twice", s.File)
			}
			seen[s.File] = true
		}
	}
}

// countFromNS counts the scrapes that state from_ns.
func countFromNS(ss []Scrape) int {
	n := 0
	for _, s := range ss {
		if s.FromNS != nil {
			n++
		}
	}
	return n
}

// validateRevisionScrapes checks what client.capture_revision promises
// of the scrapes: stored scrapes where capture takes them (scrapesPromised)
// and from_ns on them.
func validateRevisionScrapes(ps *problems, m *Manifest) {
	sm := m.ServerMetrics
	if why := scrapesPromised(m); why != "" && (sm == nil || !hasScrapes(m)) {
		ps.add("server_metrics", "holds no stored scrape, but client.capture_revision %d %s: scrapes removed from the run", m.Client.CaptureRevision, why)
	}
	if sm != nil && revised(m) && len(sm.Scrapes) > 0 && countFromNS(sm.Scrapes) == 0 {
		ps.add("server_metrics.scrapes", "no scrape states from_ns, but a capture of client.capture_revision %d states it on every scrape: from_ns removed from the run", m.Client.CaptureRevision)
	}
}

// revised reports whether m is a capture stating a revision of capture's
// evidence rules (CaptureRevision) of at least 1.
func revised(m *Manifest) bool { return revisedTo(m, 1) }

// revisedTo reports whether m is a capture stating a revision of
// capture's evidence rules of at least rev.
func revisedTo(m *Manifest, rev int) bool {
	return m.Client.Name == CaptureClientName && m.Client.CaptureRevision >= rev && !m.Imported()
}

// scrapesPromised says why a capture of revision 1 or later must hold
// server-metrics scrapes ("" when it need not): its command line names an
// explicit --server-metrics URL (capture does not start when it does not
// answer) or runs the in-process simulator, which always serves
// /metrics, without --server-metrics=off. Shards scrape nothing, and an
// incomplete run may have stopped before its first scrape (in warmup).
func scrapesPromised(m *Manifest) string {
	if !revised(m) || m.Shard != nil || m.Incomplete {
		return ""
	}
	v, set := commandFlag(m.Client.CommandLine, "server-metrics")
	switch {
	case set && v == "off":
		return ""
	case set && v != "auto":
		return "with --server-metrics " + strconv.Quote(v) + " scrapes it before and after every point (capture does not start when it does not answer)"
	case simulatedCommand(m.Client.CommandLine):
		return "with --simulate scrapes the in-process simulator's /metrics, which always answers, before and after every point"
	}
	return ""
}

// commandFlag returns the value of --name in a capture command line as
// capture records it (--name=value; a bare --name is "true") and whether
// it is there.
func commandFlag(args []string, name string) (string, bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--"+name {
			return "true", true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// InProcessSimulator reports whether m is a capture against benchseal's
// in-process simulator (--simulate on its command line): one process for
// the whole run, which cannot restart between two scrapes.
func InProcessSimulator(m *Manifest) bool {
	return m.Client.Name == CaptureClientName && !m.Imported() && simulatedCommand(m.Client.CommandLine)
}

// FreshPromised says why m must hold a measured server_state.fresh
// ("" when it need not): capture of revision 2 or later measures the fresh
// start from its first scrape whenever the engine's request and prompt
// counters are in it, and scrapesPromised says the scrapes were taken.
// (artifact checks the scrapes' counters, which schema does not parse.)
func FreshPromised(m *Manifest) string {
	if !revisedTo(m, 2) {
		return ""
	}
	return scrapesPromised(m)
}
