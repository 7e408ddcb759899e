// Multi-turn sessions: time to first token by turn and session durations.

package replay

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// SessionResult is the session column of one point × repeat of a run of
// multi-turn sessions (records naming session and turn): what the
// measured requests show by turn and by session. A key of NullReasons
// ("ttft_ns", "duration_ns") says why those values are null.
type SessionResult struct {
	// Sessions counts the sessions with a measured record, Complete those
	// whose every recorded turn ended ok.
	Sessions, Complete int64
	// ByTurn holds one entry per turn index that a record has, in order.
	ByTurn []TurnResult
	// DurationNS is the distribution over the sessions of their span: from
	// the first turn's send (sent_ns) to the last turn's end (end_ns), in
	// ns; it includes the client's time between a turn's end and the next
	// send.
	DurationNS  Dist
	NullReasons map[string]string
}

// TurnResult is one turn index of a session run: its requests, those that
// ended ok, and the time to first token of those ok with content
// (chunks_ns[0], as ttft_ns), in ns.
type TurnResult struct {
	Turn         int64
	Requests, OK int64
	TTFT         Dist
}

// sessionGroup accumulates the measured records of a point × repeat that
// name a session.
type sessionGroup struct {
	turns    map[int64]*turnAcc
	sessions map[int64]*sessionAcc
	// last holds each session's latest record's turn (for the expected
	// prefix of the next: PrefixBasisSessions).
	last map[int64]prevTurn
}

// previous returns the record of the turn before rec in its session, when
// it is the last one added (nil otherwise, or when rec names no session
// or is turn 0), and remembers rec as its session's last.
func (s *sessionGroup) previous(rec *schema.Record) *prevTurn {
	if rec.Session == nil || rec.Turn == nil {
		return nil
	}
	if s.last == nil {
		s.last = map[int64]prevTurn{}
	}
	var out *prevTurn
	if p, ok := s.last[*rec.Session]; ok && *rec.Turn > 0 && p.turn == *rec.Turn-1 {
		out = &p
	}
	s.last[*rec.Session] = prevTurn{*rec.Turn, rec.InputTokens, rec.Status == schema.StatusOK}
	return out
}

type turnAcc struct {
	requests, ok int64
	ttft         intSamples
}

type sessionAcc struct {
	first, last int64
	allOK       bool
}

func (s *sessionGroup) add(rec *schema.Record) {
	if rec.Session == nil || rec.Turn == nil {
		return
	}
	if s.turns == nil {
		s.turns, s.sessions = map[int64]*turnAcc{}, map[int64]*sessionAcc{}
	}
	t := s.turns[*rec.Turn]
	if t == nil {
		t = &turnAcc{}
		s.turns[*rec.Turn] = t
	}
	t.requests++
	ok := rec.Status == schema.StatusOK
	if ok {
		t.ok++
		if len(rec.ChunksNS) > 0 {
			t.ttft.add(rec.ChunksNS[0])
		}
	}
	a := s.sessions[*rec.Session]
	if a == nil {
		s.sessions[*rec.Session] = &sessionAcc{first: rec.SentNS, last: rec.EndNS, allOK: ok}
		return
	}
	a.first, a.last, a.allOK = min(a.first, rec.SentNS), max(a.last, rec.EndNS), a.allOK && ok
}

// finish computes the session column (nil: no record named a session).
// untimed is the non-streaming boundary, prov the manifest's provenance
// and pr the point's result, whose null reasons for ttft_ns hold here too.
func (s *sessionGroup) finish(untimed bool, prov *schema.Provenance, pr *PointResult) *SessionResult {
	if s.turns == nil {
		return nil
	}
	out := &SessionResult{Sessions: int64(len(s.sessions))}
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
	if ttftWhy != "" {
		null(schema.MetricTTFT, ttftWhy)
	}
	for _, k := range slices.Sorted(maps.Keys(s.turns)) {
		t := s.turns[k]
		d := intDist(&t.ttft)
		if ttftWhy != "" {
			d = emptyDist()
		}
		out.ByTurn = append(out.ByTurn, TurnResult{Turn: k, Requests: t.requests, OK: t.ok, TTFT: d})
	}
	var rs []string
	for _, f := range []string{schema.FieldSent, schema.FieldEnd} {
		if o := prov.Field(f); !o.Usable() {
			rs = append(rs, f+" not measured by the source ("+o.How+")")
		}
	}
	var dur intSamples
	for _, k := range slices.SortedFunc(maps.Keys(s.sessions), cmp.Compare[int64]) {
		a := s.sessions[k]
		if a.allOK {
			out.Complete++
		}
		// A hostile run's times may be any int64: a span that does not
		// fit is left out rather than wrapped.
		if d := a.last - a.first; a.last >= a.first && d >= 0 {
			dur.add(d)
		}
	}
	out.DurationNS = intDist(&dur)
	if len(rs) > 0 {
		null("duration_ns", strings.Join(rs, "; "))
		out.DurationNS = emptyDist()
	}
	return out
}
