package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// fillPeakConcurrency sets the concurrency of every concurrency-mode point
// that the files did not state to the peak number of requests in flight
// among its records, and says so in source.derived. When the records'
// send or end times were not measured (manifest.provenance), the peak
// would be computed from placeholders: the concurrency is left unset
// (source.derived says why) and the import must state it
// (unstatedConcurrency).
func fillPeakConcurrency(res *Result, facts *RecordFacts) {
	m := &res.Manifest
	if m.Load.Mode != schema.ModeConcurrency {
		return
	}
	why := unmeasuredSpan(m.Provenance)
	for i := range m.Load.Points {
		p := &m.Load.Points[i]
		if p.Concurrency > 0 {
			continue
		}
		if why != "" {
			Derive(m, "load.points[%d].concurrency: not stated by the files, and not derived from the records: %s; the import states it", i, why)
			continue
		}
		type ev struct {
			t int64
			d int
		}
		var evs []ev
		for _, r := range facts.spans[p.Name] {
			evs = append(evs, ev{r[0], +1}, ev{r[1], -1})
		}
		sort.Slice(evs, func(a, b int) bool {
			if evs[a].t != evs[b].t {
				return evs[a].t < evs[b].t
			}
			return evs[a].d < evs[b].d // ends before starts at the same instant
		})
		cur, peak := 0, 0
		for _, e := range evs {
			cur += e.d
			peak = max(peak, cur)
		}
		if peak < 1 {
			peak = 1
		}
		p.Concurrency = peak
		Derive(m, "load.points[%d].concurrency: not stated by the files; set to the peak number of requests in flight among its records (%d)", i, peak)
	}
}

// unmeasuredSpan says why records with provenance p cannot give the
// number of requests in flight: their send or end times are placeholders
// ("" when both were measured or derived from measurements).
func unmeasuredSpan(p *schema.Provenance) string {
	var rs []string
	for _, f := range []string{schema.FieldSent, schema.FieldEnd} {
		if o := p.Field(f); !o.Usable() {
			rs = append(rs, f+" not measured by the source ("+o.How+")")
		}
	}
	return strings.Join(rs, "; ")
}

// unstatedConcurrency refuses a concurrency-mode point whose concurrency
// neither the files nor the publisher's overlay state (fillPeakConcurrency
// leaves it unknown when the records cannot give it): the offered load is
// never guessed.
func unstatedConcurrency(m *schema.Manifest) error {
	if m.Load.Mode != schema.ModeConcurrency {
		return nil
	}
	pts := slices.Clone(m.Load.Points)
	bad := -1
	for i := range pts {
		if pts[i].Concurrency < 1 {
			pts[i].Concurrency = -1
			if bad < 0 {
				bad = i
			}
		}
	}
	if bad < 0 {
		return nil
	}
	b, err := json.Marshal(pts)
	if err != nil {
		return err
	}
	set := strings.ReplaceAll(string(b), `"concurrency":-1`, `"concurrency":N`)
	return fmt.Errorf("load.points[%d].concurrency (point %q): the files do not state the offered concurrency and the records cannot give it (%s); state it, e.g. --set 'load.points=%s' with N the concurrency the run used", bad, pts[bad].Name, unmeasuredSpan(m.Provenance), set)
}

// fillWarmup declares a warmup when records are in the warmup phase but
// the files stated none: the largest number of warmup records of a point.
func fillWarmup(res *Result, facts *RecordFacts) {
	m := &res.Manifest
	if m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0 {
		return
	}
	most := 0
	for _, n := range facts.warmup {
		most = max(most, n)
	}
	if most > 0 {
		m.Load.Warmup.Requests = most
		Derive(m, "load.warmup.requests: not stated as a count by the files; set to the most warmup-phase records of one point (%d)", most)
	}
}

// Check validates a finished result in memory, before anything is
// written: the manifest, the claims and every record, with schema's own
// rules. A result with no records is accepted only when it is an
// external-evidence reference (schema.Manifest.ExternalReference), as for
// MLPerf.
func Check(res *Result) error {
	i := 0
	return check(res, func() (*schema.Record, error) {
		if i == len(res.Records) {
			return nil, io.EOF
		}
		i++
		return &res.Records[i-1], nil
	})
}

// check is Check with the records read from next, which returns io.EOF
// after the last.
func check(res *Result, next func() (*schema.Record, error)) error {
	m := &res.Manifest
	var ps []schema.Problem
	ps = append(ps, schema.ValidateManifest(m, schema.ManifestFile)...)
	if res.Claims != nil {
		ps = append(ps, schema.ValidateClaims(res.Claims, m, schema.ClaimsFile)...)
	}
	rc := schema.NewRecordChecker(m)
	for line := 1; len(ps) <= 50; line++ {
		rec, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		ps = append(ps, rc.Check(schema.RecordsFile, line, rec)...)
	}
	ps = append(ps, rc.Finish()...)
	if len(ps) == 0 {
		return nil
	}
	var hints []string
	for _, p := range ps {
		switch {
		case p.Field == "model.name":
			hints = append(hints, "the files do not name the model: give it with --set model.name=NAME")
		case p.Field == "epoch_unix_ns":
			hints = append(hints, "give the run's times with --set epoch_unix_ns=NS --set start_time=RFC3339 --set finish_time=RFC3339 (or leave all three unknown)")
		}
	}
	err := error(&schema.ValidationError{Problems: ps})
	if len(hints) > 0 {
		return fmt.Errorf("%w\n  hint: %s", err, strings.Join(hints, "\n  hint: "))
	}
	return err
}
