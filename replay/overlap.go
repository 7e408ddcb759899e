// Phases of different shards that overlap on a merged timeline.

package replay

import (
	"fmt"
	"slices"
	"strings"

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

func ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

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
