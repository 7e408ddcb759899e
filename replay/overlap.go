// Phases of different shards that overlap on a merged timeline.

package replay

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// PhasesOverlapFlag flags a point of a run merged from shards during whose
// measured phase, on one shard, another shard was running another phase
// or point: the server's load was then not this point's alone. Shards are
// not re-synchronised between phases, so this happens when they started
// apart or one ran slower.
const PhasesOverlapFlag = "phases_overlap"

// spanKey is one phase of one point × repeat on one shard.
type spanKey struct {
	point  string
	repeat int
	phase  string
	shard  int64
}

// span is the extent of a phase on the merged timeline: first send to
// last end, in ns since the run's epoch.
type span struct{ from, to int64 }

// phaseSpans collects the spans of every phase of every shard.
type phaseSpans struct {
	spans map[spanKey]*span
	last  *span
	lastK spanKey
}

func (ps *phaseSpans) add(rec *schema.Record) {
	if rec.Shard == nil {
		return
	}
	k := spanKey{rec.Point, rec.Repeat, rec.Phase, *rec.Shard}
	if ps.last == nil || k != ps.lastK {
		if ps.spans == nil {
			ps.spans = map[spanKey]*span{}
		}
		s := ps.spans[k]
		if s == nil {
			s = &span{rec.SentNS, rec.EndNS}
			ps.spans[k] = s
		}
		ps.last, ps.lastK = s, k
	}
	ps.last.from = min(ps.last.from, rec.SentNS)
	ps.last.to = max(ps.last.to, rec.EndNS, rec.SentNS)
}

// overlaps returns, for the measured phase of point × repeat, one line per
// other shard's phase of another point, repeat or phase that ran during
// it on the merged timeline (sorted; empty when none).
func (ps *phaseSpans) overlaps(point string, repeat int) []string {
	var out []string
	for k, s := range ps.spans {
		if k.point != point || k.repeat != repeat || k.phase != schema.PhaseMeasure {
			continue
		}
		for o, t := range ps.spans {
			if o.shard == k.shard || (o.point == k.point && o.repeat == k.repeat && o.phase == k.phase) {
				continue
			}
			from, to := max(s.from, t.from), min(s.to, t.to)
			if from >= to {
				continue
			}
			out = append(out, fmt.Sprintf("shard %d measured it from %s to %s ms while shard %d ran point %s repeat %d %s for %s ms of it",
				k.shard, ms(s.from), ms(s.to), o.shard, o.point, o.repeat, o.phase, ms(to-from)))
		}
	}
	slices.Sort(out)
	return out
}

// ms is ns in ms as report prints it (internal/digits).
func ms(ns int64) string { return digits.Milliseconds(ns) }

// overlapNote is the note of a point whose measured phase overlapped
// other shards' phases (at most three listed).
func overlapNote(pr *PointResult, lines []string) string {
	more := ""
	if len(lines) > 3 {
		more = fmt.Sprintf("; and %d more", len(lines)-3)
		lines = lines[:3]
	}
	return fmt.Sprintf("%s: point %s repeat %d: %s%s: the server's load during the measurement was not this point's alone, so its rates and latencies mix points",
		PhasesOverlapFlag, pr.Point, pr.Repeat, strings.Join(lines, "; "), more)
}

// ShardsApartFlag names the note of a point of a run merged from shards
// whose shards measured it at different times: no instant of the merged
// timeline had every shard in its measured phase, so the point's load
// was never offered whole.
const ShardsApartFlag = "shards_apart"

// apart returns, for the measured phase of point × repeat when two or more
// shards measured it and no instant lies inside every shard's measured
// phase, one line per shard giving its span (ordered by shard); nil when
// the spans share an instant.
func (ps *phaseSpans) apart(point string, repeat int) []string {
	var keys []spanKey
	for k := range ps.spans {
		if k.point == point && k.repeat == repeat && k.phase == schema.PhaseMeasure {
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 {
		return nil
	}
	slices.SortFunc(keys, func(a, b spanKey) int { return int(a.shard - b.shard) })
	from, to := ps.spans[keys[0]].from, ps.spans[keys[0]].to
	for _, k := range keys[1:] {
		from, to = max(from, ps.spans[k].from), min(to, ps.spans[k].to)
	}
	if from < to {
		return nil
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("shard %d measured it from %s to %s ms", k.shard, ms(ps.spans[k].from), ms(ps.spans[k].to))
	}
	return out
}

// apartNote is the note of a point whose shards measured it at different
// times (lines from apart).
func apartNote(point string, repeat int, lines []string) string {
	return fmt.Sprintf("%s: point %s repeat %d: %s, with no instant in common: the shards offered their shares of the load in turn, never together, so the point's offered load was never offered at once and its rates, goodput and overload verdict describe a union that did not run together (run the shards concurrently: capture --start-at)",
		ShardsApartFlag, point, repeat, strings.Join(lines, ", "))
}

// ShardsApart reads the records of a run merged from shards and returns
// one note per point × repeat whose shards measured it at different times
// (see ShardsApartFlag); nil for a run not merged from shards. merge
// prints them as warnings; replay adds them to its notes.
func ShardsApart(ctx context.Context, run schema.Run) ([]string, error) {
	m := run.Manifest()
	if m.Shards == nil || m.Shards.Count < 2 {
		return nil, nil
	}
	it, err := run.OpenRecords()
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer it.Close()
	var ps phaseSpans
	type pr struct {
		point  string
		repeat int
	}
	var order []pr
	seen := map[pr]bool{}
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		ps.add(rec)
		if k := (pr{rec.Point, rec.Repeat}); !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	var out []string
	for _, k := range order {
		if lines := ps.apart(k.point, k.repeat); lines != nil {
			out = append(out, apartNote(k.point, k.repeat, lines))
		}
	}
	return out, nil
}
