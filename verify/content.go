package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/schema"
)

// checkContent makes one streaming pass over every layer: uncompressed
// digests and sizes (7), schema and semantic validation of the manifest,
// claims and every record (8), and consistency of the shards with the plan
// (9).
//
// Every record decoded is pushed to feed when it is not nil (the claims
// recompute), and the feed is finished on every return: complete after the
// last record, otherwise with the reason it stopped.
func (v *Verifier) checkContent(ctx context.Context, b *artifact.Bundle, res *Result, feed *recordFeed) []*CheckError {
	var feedErr error = errFeedEnded
	if feed != nil {
		defer func() { feed.finish(feedErr) }()
	}
	var out []*CheckError
	m := b.Manifest()

	// 7. Non-record layers: uncompressed digest and size. Record layers
	// are checked by the record stream below.
	pl, ok := checkPlainLayers(ctx, b, m)
	if !ok {
		return out
	}

	// 8. Schema: documents, then records streamed from the shards.
	var problems []schema.Problem
	problems = append(problems, schema.ValidateManifest(m, artifact.TitleManifest)...)
	problems = append(problems, pl.problems...)
	if c := b.Claims(); c != nil {
		problems = append(problems, schema.ValidateClaims(c, m, artifact.TitleClaims)...)
	}
	rc := schema.NewRecordChecker(m)
	if pl.items != nil {
		pl.items.Close()
		rc.SetWorkload(pl.items)
	}
	var rp recordPass
	if pl.err == nil {
		if rp, ok = v.readRecords(ctx, b, rc, feed, problems); !ok {
			return out
		}
		problems = rp.problems
		if rp.err == nil {
			feedErr = nil
			problems = append(problems, rc.Finish()...)
			sum := rc.Summary()
			res.Records = &sum
			for _, tw := range sum.Twins {
				res.Warnings = append(res.Warnings, "UNVERIFIED independence: "+tw.String())
			}
		}
	}
	switch {
	case pl.err != nil:
		out = append(out, res.fail(CheckUncompressed, pl.blob, pl.err))
		res.skip(CheckSchema, "not run: uncompressed content did not verify")
		res.skip(CheckConsistency, "not run: uncompressed content did not verify")
		return out
	case rp.err != nil && (rp.check == CheckUncompressed || rp.check == CheckDescriptors):
		out = append(out, res.fail(rp.check, rp.blob, rp.err))
		if rp.check == CheckDescriptors {
			res.skip(CheckUncompressed, "not run: a stored blob did not verify")
		}
		res.skip(CheckSchema, "not run: record shards did not verify")
		res.skip(CheckConsistency, "not run: record shards did not verify")
		return out
	}
	res.pass(CheckUncompressed, fmt.Sprintf("%d layers decompress (window ≤ %d MiB) to their declared sha256 and size", len(b.Layers()), artifact.ZstdMaxWindow>>20))
	if rp.err != nil {
		problems = append(problems, schema.Problem{File: rp.blob, Message: rp.err.Error()})
	}
	if c := v.reportSchema(res, problems, rp.omitted); c != nil {
		out = append(out, c)
	}
	if rp.err != nil {
		res.skip(CheckConsistency, "not run: records did not decode")
		return out
	}

	// 9. Consistency of the shards with the plan.
	if err := consistency(b, m, rp.counts); err != nil {
		out = append(out, res.fail(CheckConsistency, err.blob, err.err))
	} else {
		res.pass(CheckConsistency, fmt.Sprintf("%s cover %s × %s; counts add up", digits.Count(len(b.RecordLayers()), "shard", "shards"),
			digits.Count(len(m.Load.Points), "point", "points"), digits.Count(m.Load.Repeats, "repeat", "repeats")))
	}
	return out
}

// plainLayers is what step 7 found in the layers other than records.
type plainLayers struct {
	// items are the workload layer's items (nil without one), which bound
	// the token counts of the records; problems are the workload's
	// disagreements with the manifest.
	items    *schema.WorkloadItems
	problems []schema.Problem
	// err is why the first layer that did not stream to its declared
	// digest and size failed, and blob names it; nil when all did.
	err  error
	blob string
}

// checkPlainLayers streams every layer but the record shards to its
// uncompressed digest and size (7), stopping at the first that does not,
// and checks the workload layer against the manifest. ok is false when
// ctx ended first.
func checkPlainLayers(ctx context.Context, b *artifact.Bundle, m *schema.Manifest) (pl plainLayers, ok bool) {
	for _, l := range b.Layers() {
		if l.Kind == artifact.KindRecords {
			continue
		}
		if err := ctx.Err(); err != nil {
			return pl, false
		}
		lines := &lineCounter{}
		var w io.Writer = lines
		if l.Kind == artifact.KindWorkload {
			// Its items bound the token counts of the records.
			pl.items = schema.NewWorkloadItems()
			w = io.MultiWriter(lines, pl.items)
		}
		rc, err := b.OpenLayer(l)
		if err == nil {
			_, err = io.Copy(w, rc)
			rc.Close()
		}
		if err != nil {
			_, blob, cause := artifactErr(err)
			pl.err, pl.blob = cause, blob
			break
		}
		if l.Kind == artifact.KindWorkload {
			// The layer streamed to its recorded uncompressed digest, so
			// that digest is the workload file's SHA-256: it must be the
			// one the manifest declares (as validate checks for a run
			// directory); a trace replay's items are rebuilt from its trace.
			pl.problems = append(artifact.WorkloadProblems(m, l, lines.n), traceProblems(b, m, pl.items)...)
		}
	}
	return pl, true
}

// recordPass is what the record stream of step 8 found.
type recordPass struct {
	// counts are the measured and warmup records read per shard title.
	counts map[string]*shardCount
	// problems are the problems given to readRecords and those of every
	// record checked; omitted counts the problems past the listing cap.
	problems []schema.Problem
	omitted  int
	// err is why the stream stopped before its end, with the check and
	// blob it names (artifactErr); nil when every record was read.
	err         error
	check, blob string
}

// readRecords streams every record of the shards once: each is pushed to
// feed (when not nil), checked by rc (past 10×maxProblems problems only
// counted) and counted per shard and phase. problems are the ones found
// before, extended in the result. ok is false when ctx ended first.
func (v *Verifier) readRecords(ctx context.Context, b *artifact.Bundle, rc *schema.RecordChecker, feed *recordFeed, problems []schema.Problem) (rp recordPass, ok bool) {
	rp.counts = map[string]*shardCount{}
	rs, _ := b.OpenRecordStream()
	for n, read := 0, progress.Phase(ctx, "verify: check records", "records", declaredRecords(b)); ; n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			rs.Close()
			return rp, false
		}
		rec, err := rs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			rp.check, rp.blob, rp.err = artifactErr(err)
			break
		}
		if read.Add(1); feed != nil {
			feed.push(rec)
		}
		if len(problems) < 10*v.maxProblems {
			problems = append(problems, rc.Check(rs.Name(), rs.Line(), rec)...)
		} else {
			rp.omitted += rc.Count(rs.Line(), rec)
		}
		key := rs.Name()
		sc := rp.counts[key]
		if sc == nil {
			sc = &shardCount{}
			rp.counts[key] = sc
		}
		if rec.Phase == schema.PhaseWarmup {
			sc.warmup++
		} else {
			sc.measure++
		}
	}
	rs.Close()
	rp.problems = problems
	return rp, true
}

// reportSchema settles check 8 from the problems found (and omitted, the
// ones past the listing cap): it fails naming the first, listing up to
// maxProblems, or passes when there are none.
func (v *Verifier) reportSchema(res *Result, problems []schema.Problem, omitted int) *CheckError {
	if len(problems) == 0 {
		res.pass(CheckSchema, "manifest, claims and every record validate")
		return nil
	}
	c := res.fail(CheckSchema, problems[0].File, fmt.Errorf("%d problem(s), first: %s", len(problems)+omitted, problems[0]))
	cr := res.check(CheckSchema)
	for i, p := range problems {
		if i == v.maxProblems {
			break
		}
		cr.Problems = append(cr.Problems, p.String())
	}
	if more := len(problems) + omitted - len(cr.Problems); more > 0 {
		cr.Problems = append(cr.Problems, fmt.Sprintf("... and %d more", more))
	}
	return c
}

type blobErr struct {
	blob string
	err  error
}

type shardCount struct{ measure, warmup int64 }

// consistency checks the shards against the plan: one shard per declared
// point and repeat (all of them unless the run is marked incomplete), no
// shard outside the plan, measured records in each, warmup records when
// warmup was declared, and record counts that add up to the predicate's.
func consistency(b *artifact.Bundle, m *schema.Manifest, counts map[string]*shardCount) *blobErr {
	declared := map[string]int{} // point name → index
	for i, p := range m.Load.Points {
		if _, dup := declared[p.Name]; !dup {
			declared[p.Name] = i
		}
	}
	repeats := max(m.Load.Repeats, 1)
	have := map[string]artifact.Layer{}
	var total int64
	prev := -1
	for _, l := range b.RecordLayers() {
		pi, ok := declared[l.Point]
		if !ok || l.Repeat >= repeats {
			return &blobErr{l.Title, fmt.Errorf("shard of point %q repeat %d is outside the plan (%d points, %d repeats)", l.Point, l.Repeat, len(m.Load.Points), repeats)}
		}
		// The records are the run's only in this order: points as the
		// manifest lists them, then repeats ascending (what pack
		// writes and unpack reads back).
		if rank := pi*repeats + l.Repeat; rank <= prev {
			return &blobErr{l.Title, fmt.Errorf("shard of point %q repeat %d is out of order: record shards follow the manifest's point order, then repeats ascending", l.Point, l.Repeat)}
		} else {
			prev = rank
		}
		have[fmt.Sprintf("%s\x00%d", l.Point, l.Repeat)] = l
		total += l.Records
	}
	warm := m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0
	pointWarmup := map[string]int64{}
	for _, p := range m.Load.Points {
		for r := 0; r < repeats; r++ {
			l, ok := have[fmt.Sprintf("%s\x00%d", p.Name, r)]
			if !ok {
				if m.Incomplete {
					continue
				}
				return &blobErr{artifact.TitleManifest, fmt.Errorf("declared point %q repeat %d has no records", p.Name, r)}
			}
			c := counts[l.Title]
			if c == nil {
				c = &shardCount{}
			}
			if c.measure+c.warmup != l.Records {
				return &blobErr{l.Title, fmt.Errorf("%d records read, the layer declares %d", c.measure+c.warmup, l.Records)}
			}
			if c.measure == 0 && !m.Incomplete {
				return &blobErr{l.Title, fmt.Errorf("point %q repeat %d has no measured records", p.Name, r)}
			}
			pointWarmup[p.Name] += c.warmup
		}
		if warm && pointWarmup[p.Name] == 0 && !m.Incomplete {
			return &blobErr{recordsTitleOf(b, p.Name), fmt.Errorf("warmup was declared but point %q has no warmup records", p.Name)}
		}
	}
	if sum := int64(0); total >= 0 {
		for _, c := range counts {
			sum += c.measure + c.warmup
		}
		if sum != total {
			return &blobErr{"", fmt.Errorf("%d records read, the shards declare %d", sum, total)}
		}
	}
	return nil
}

func recordsTitleOf(b *artifact.Bundle, point string) string {
	for _, l := range b.RecordLayers() {
		if l.Point == point {
			return l.Title
		}
	}
	return artifact.TitleManifest
}

// lineCounter counts the newlines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// declaredRecords is the number of records the record layers declare,
// the total of verify's record pass (-1 when a layer states none).
func declaredRecords(b *artifact.Bundle) int64 {
	var n int64
	for _, l := range b.Layers() {
		if l.Kind == artifact.KindRecords {
			if l.Records < 0 {
				return -1
			}
			n += l.Records
		}
	}
	return n
}

// traceProblems rebuilds a trace replay's items from the trace file the
// bundle keeps (schema.CheckTraceItems), once the workload layer has
// streamed into items.
func traceProblems(b *artifact.Bundle, m *schema.Manifest, items *schema.WorkloadItems) []schema.Problem {
	if m == nil || m.Workload.Trace == nil {
		return nil
	}
	items.Close()
	data, err := b.ReadAttachment(schema.TraceAttachment)
	if err != nil {
		return []schema.Problem{{File: schema.AttachmentsDir + "/" + schema.TraceAttachment, Field: "workload.trace.stored",
			Message: "cannot be read (" + err.Error() + "): a trace replay keeps the trace file it replayed, from which its workload items are rebuilt"}}
	}
	return schema.CheckTraceItems(m, data, items, artifact.TitleWorkload)
}
