// The stored server-metrics scrapes against the manifest that names them.

package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// UptimeSlackNS is how far a fresh start's uptime_ns may exceed the
// run's start (epoch_unix_ns) minus the engine's process start: the
// rounding of process_start_time_seconds to nanoseconds.
const UptimeSlackNS = 1_000_000

// CheckServerEvidence checks every server-metrics scrape manifest m names
// (manifest.server_metrics.scrapes and a measured
// server_state.fresh.scrape) against its stored bytes, which read returns
// by attachment name (relative to attachments/): present, of the sha256
// the manifest states, and parsable; a measured fresh start's counters,
// its fresh flag and its uptime_ns are re-derived from its scrape (the
// uptime is bounded by the run's start, since the scrape was taken before
// it: its own wall time is not stored). file names the manifest in the
// problems. validate and pack (run directories, CheckRunDirServerEvidence)
// and verify (bundles) all call it, so pack signs nothing verify would
// reject for it. (It lives here, not in schema, which parses no scrape.)
//
// tallies (schema.RunSummary.Server, from the records' check; nil when
// the records were not read) are compared with the engine's counters
// between each point's scrapes (see checkServerCounters).
func CheckServerEvidence(m *schema.Manifest, file string, read func(name string) ([]byte, error), tallies []schema.ScrapeTally) []schema.Problem {
	out, _ := CheckServerEvidenceNotes(m, file, read, tallies)
	return out
}

// CheckServerEvidenceNotes is CheckServerEvidence that also returns what
// the comparison with the engine's counters could not check, one sentence
// each (verify prints them as UNVERIFIED): a counter that went down
// between a point's scrapes across an engine restart (a changed
// process_start_time_seconds) or with no start time stated, per point ×
// repeat: verify turns that pair's claims UNVERIFIED with the reason.
func CheckServerEvidenceNotes(m *schema.Manifest, file string, read func(name string) ([]byte, error), tallies []schema.ScrapeTally) ([]schema.Problem, []schema.CellReason) {
	if m == nil {
		return nil, nil
	}
	var out []schema.Problem
	add := func(field, format string, a ...any) {
		out = append(out, schema.Problem{File: file, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	load := func(field, name, sum string) *servermetrics.Snapshot {
		if !schema.IsScrapeFile(name) {
			return nil // reported by ValidateManifest
		}
		b, err := read(name)
		if err != nil {
			add(field, "the scrape %s/%s: %v", schema.AttachmentsDir, name, err)
			return nil
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			add(field, "the scrape %s/%s: sha256 %s differs from the manifest's %s", schema.AttachmentsDir, name, hex.EncodeToString(h[:]), sum)
			return nil
		}
		snap, err := servermetrics.Parse(bytes.NewReader(b))
		if err != nil {
			add(field, "the scrape %s/%s: %v", schema.AttachmentsDir, name, err)
			return nil
		}
		if m.Evidence != schema.EvidenceSynthetic && bytes.Contains(b, []byte(`="`+schema.SimulatorModel+`"`)) {
			// The simulator labels its series with its model name.
			add("evidence", "is %q but the scrape %s/%s (%s) has series labelled %q, the simulator's: a run against benchseal's simulator is %q",
				m.Evidence, schema.AttachmentsDir, name, field, schema.SimulatorModel, schema.EvidenceSynthetic)
		}
		return snap
	}
	var fresh *servermetrics.Snapshot
	measured := m.ServerState != nil && m.ServerState.Fresh != nil && m.ServerState.Fresh.Source == schema.StateMeasured
	if measured {
		fresh = load("server_state.fresh.scrape", m.ServerState.Fresh.Scrape, m.ServerState.Fresh.SHA256)
	}
	var scrapes []schema.Scrape
	if m.ServerMetrics != nil {
		scrapes = m.ServerMetrics.Scrapes
	}
	prior := priorScrapes(scrapes)
	need := map[int]bool{}
	for _, t := range tallies {
		need[t.Before], need[t.Scrape] = true, true
		if j, ok := prior[t.Before]; ok {
			need[j] = true
		}
	}
	counters := map[int]*servermetrics.Snapshot{}
	engines := map[int]string{}
	starts := map[int]float64{} // process_start_time_seconds, where stated
	loaded := map[int]*servermetrics.Snapshot{}
	for i, s := range scrapes {
		if s.Error == "" {
			snap := load(fmt.Sprintf("server_metrics.scrapes[%d].file", i), s.File, s.SHA256)
			if snap != nil {
				loaded[i] = snap
			}
			if snap != nil && need[i] {
				counters[i], engines[i] = snap.Counters(), servermetrics.DetectEngine(snap)
				if sv, ok := servermetrics.ServedBefore(snap); ok && sv.HaveStart {
					starts[i] = sv.ProcessStart
				}
			}
		}
	}
	earlier := map[int]baseline{}
	for _, t := range tallies {
		if j, ok := prior[t.Before]; ok && counters[j] != nil {
			earlier[t.Before] = baseline{counters[j], fmt.Sprintf("server_metrics.scrapes[%d]", j)}
		} else if !ok && fresh != nil {
			earlier[t.Before] = baseline{fresh.Counters(), "server_state.fresh.scrape"}
		}
	}
	out = append(out, checkPromisedEvidence(m, file, fresh, measured, loaded)...)
	out = append(out, CheckGPUEvidence(m, file, read)...)
	probs, notes := checkServerCounters(file, tallies, counters, loaded, engines, earlier, starts, schema.InProcessSimulator(m))
	out = append(out, probs...)
	if fresh != nil { // measured
		out = append(out, checkFresh(m, file, fresh)...)
	}
	return out, notes
}

// checkPromisedEvidence checks what the capture's own rules promise of the
// scrapes it stored (loaded, by index; fresh: the fresh-start scrape,
// when measured): under --simulate, one process start time in every scrape
// (the in-process simulator cannot restart, so a changed
// process_start_time_seconds is an edited scrape); and a measured
// server_state.fresh where schema.FreshPromised says capture measures it
// and the scrapes hold the counters it is measured from.
func checkPromisedEvidence(m *schema.Manifest, file string, fresh *servermetrics.Snapshot, measured bool, loaded map[int]*servermetrics.Snapshot) []schema.Problem {
	var out []schema.Problem
	idx := make([]int, 0, len(loaded))
	for i := range loaded {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	if schema.InProcessSimulator(m) {
		first, from := 0.0, ""
		if sv, ok := servermetrics.ServedBefore(orEmpty(fresh)); ok && sv.HaveStart {
			first, from = sv.ProcessStart, "server_state.fresh.scrape"
		}
		for _, i := range idx {
			sv, ok := servermetrics.ServedBefore(loaded[i])
			switch {
			case !ok || !sv.HaveStart:
			case from == "":
				first, from = sv.ProcessStart, fmt.Sprintf("server_metrics.scrapes[%d]", i)
			case sv.ProcessStart != first:
				out = append(out, schema.Problem{File: file, Field: fmt.Sprintf("server_metrics.scrapes[%d]", i), Message: fmt.Sprintf(
					"states %s %s, but %s states %s: the run is against the in-process simulator (--simulate on client.command_line), one process that cannot restart",
					servermetrics.ProcessStartMetric, num(sv.ProcessStart), from, num(first))})
			}
		}
	}
	if why := schema.FreshPromised(m); why != "" && !measured {
		for _, i := range idx {
			if _, ok := servermetrics.ServedBefore(loaded[i]); ok {
				out = append(out, schema.Problem{File: file, Field: "server_state.fresh", Message: fmt.Sprintf(
					"is not measured, but client.capture_revision %d %s and measures the fresh start from its first scrape, whose engine request and prompt counters server_metrics.scrapes[%d] shows: the fresh-start evidence removed from the run",
					m.Client.CaptureRevision, why, i)})
				break
			}
		}
	}
	return out
}

// orEmpty is snap, or an empty snapshot when it is nil.
func orEmpty(snap *servermetrics.Snapshot) *servermetrics.Snapshot {
	if snap == nil {
		return &servermetrics.Snapshot{}
	}
	return snap
}

// checkFresh re-derives a measured fresh start's counters, its fresh flag
// and its uptime_ns from its scrape snap.
func checkFresh(m *schema.Manifest, file string, snap *servermetrics.Snapshot) []schema.Problem {
	var out []schema.Problem
	add := func(field, format string, a ...any) {
		out = append(out, schema.Problem{File: file, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	f := m.ServerState.Fresh
	sv, ok := servermetrics.ServedBefore(snap)
	switch {
	case !ok:
		add("server_state.fresh", "%s holds no engine request and prompt-token counters, so it measures nothing", f.Scrape)
		return out
	case f.RequestsBefore == nil || f.PromptTokensBefore == nil || sv.Requests != *f.RequestsBefore || sv.PromptTokens != *f.PromptTokensBefore:
		add("server_state.fresh", "%s counts %s requests and %s prompt tokens, the manifest says %v and %v",
			f.Scrape, digits.Shortest(sv.Requests), digits.Shortest(sv.PromptTokens), orNone(f.RequestsBefore), orNone(f.PromptTokensBefore))
	case sv.Fresh() != f.Fresh:
		add("server_state.fresh.fresh", "is %v, but %s says %v", f.Fresh, f.Scrape, sv.Fresh())
	}
	switch {
	case sv.HaveStart != (f.UptimeNS != nil):
		add("server_state.fresh.uptime_ns", "stated: %v, but %s has %s: %v (uptime is stated exactly when it is)", f.UptimeNS != nil, f.Scrape, servermetrics.ProcessStartMetric, sv.HaveStart)
	case f.UptimeNS != nil:
		if most := m.EpochUnixNS - int64(sv.ProcessStart*1e9); *f.UptimeNS > most+UptimeSlackNS {
			add("server_state.fresh.uptime_ns", "%d, but %s says the engine started %d ns before the run did (epoch_unix_ns), and the scrape came before the run", *f.UptimeNS, f.Scrape, most)
		}
	}
	return out
}

func orNone(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// CheckRunDirServerEvidence is CheckServerEvidence on the run directory
// dir, reading its manifest (nil when that does not decode: validation
// says why), with the tallies of its records (sum.Server; sum nil when
// the records were not read), and CheckGPUIdle with the records' busy
// spans (sum.Busy).
func CheckRunDirServerEvidence(dir string, sum *schema.RunSummary) []schema.Problem {
	var tallies []schema.ScrapeTally
	if sum != nil {
		tallies = sum.Server
	}
	mf := filepath.Join(dir, schema.ManifestFile)
	f, err := os.Open(mf)
	if err != nil {
		return nil
	}
	m, err := schema.DecodeManifest(f, mf)
	f.Close()
	if err != nil {
		return nil
	}
	out := CheckServerEvidence(m, mf, readAttachmentFile(dir), tallies)
	if sum != nil {
		idle, _ := CheckGPUIdle(m, mf, readAttachmentFile(dir), sum.Busy)
		out = append(out, idle...)
	}
	return out
}

// readAttachmentFile reads the attachment name of the run directory dir
// for CheckServerEvidence: a regular file of at most
// servermetrics.MaxScrapeBytes.
func readAttachmentFile(dir string) func(name string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		p := filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(name))
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("not in the run directory")
		}
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, errors.New("not a regular file")
		}
		fh, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		b, err := io.ReadAll(io.LimitReader(fh, servermetrics.MaxScrapeBytes+1))
		if err != nil {
			return nil, err
		}
		if len(b) > servermetrics.MaxScrapeBytes {
			return nil, fmt.Errorf("larger than %d bytes", servermetrics.MaxScrapeBytes)
		}
		return b, nil
	}
}

// priorScrapes maps each stored scrape to the stored scrape taken just
// before it (the greatest at_ns below its own; none for the earliest), in
// O(n log n) for n scrapes.
func priorScrapes(scrapes []schema.Scrape) map[int]int {
	var idx []int
	for i, s := range scrapes {
		if s.Error == "" {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return scrapes[idx[a]].AtNS < scrapes[idx[b]].AtNS })
	out := map[int]int{}
	last := -1 // the latest scrape strictly before the current at_ns
	for k, i := range idx {
		if k > 0 && scrapes[idx[k-1]].AtNS < scrapes[i].AtNS {
			last = idx[k-1]
		}
		if last >= 0 {
			out[i] = last
		}
	}
	return out
}
