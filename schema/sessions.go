// Multi-turn sessions: each turn of a session carries the history of the
// turns before it and is sent only after the previous turn ended.

package schema

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Conversation dataset formats capture reads.
const (
	// ConversationsShareGPT is ShareGPT's JSON: a list of {"id",
	// "conversations": [{"from": "human"|"gpt"|"system", "value"}]}, the
	// format of ShareGPT_V3_unfiltered_cleaned_split.json that vLLM's
	// benchmarks read.
	ConversationsShareGPT = "sharegpt"
)

// HistoryDataset is SessionSource.History when each turn's history holds
// the dataset's own answers to the earlier turns (not the served model's):
// every byte a turn sends is then fixed before the run, in its workload
// item.
const HistoryDataset = "dataset"

// SessionSource describes a run of multi-turn sessions: the conversation
// dataset, how many sessions each point × repeat ran and what a turn's
// history holds. Each turn is one workload item (with its session, turn
// and its session's turns) and one request; request k of a phase sends
// workload item k, and validate checks that turn t of a session was sent
// after turn t−1 ended (CheckSessionOrder).
type SessionSource struct {
	// Format is ConversationsShareGPT; File the dataset's base name and
	// SHA256 the hex SHA-256 of its bytes.
	Format string `json:"format"`
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256"`
	// Sessions is the number of sessions every point × repeat ran, and
	// Turns the requests they make together (every point's requests).
	Sessions int `json:"sessions"`
	Turns    int `json:"turns"`
	// History is HistoryDataset.
	History string `json:"history"`
}

// Summary says what a reviewer can and cannot check of a session run's
// conversations ("" for nil): every byte sent is in workload.jsonl, so
// validate and verify hold each turn to its item and order, but the
// dataset file is not kept in the run, so which conversations were drawn
// from it, in what order, and that the answers sent as history are the
// dataset's, is the signer's word unless its sha256 matches the published
// file's and the draw is redone by hand.
func (s *SessionSource) Summary() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%d session(s) of %d turn(s) from %s %s sha256 %s, which is not kept in the run: every byte sent is in workload.jsonl and checked against the records, but which conversations were drawn from the file, and that the history sent is the dataset's, is the signer's word",
		s.Sessions, s.Turns, s.Format, s.File, s.SHA256)
}

// sessionKey names one session: its cell (point × repeat), phase and
// number.
type sessionKey struct {
	cell    int
	warmup  bool
	session int64
}

// sessionTurn is what the order check keeps of one turn's record: 32
// bytes a record of a session run.
type sessionTurn struct {
	turn, sent, end int64
	// sched is the record's scheduled_ns (noSched: none).
	sched int64
	line  int32
}

// noSched is sessionTurn.sched of a record without scheduled_ns.
const noSched = math.MinInt64

// sessionCheck collects the turns of every session (nil: the run is not
// a session run).
type sessionCheck struct {
	turns map[sessionKey][]sessionTurn
	order []sessionKey
}

// checkSession checks a record's session and turn against the manifest
// and its workload item, and keeps its times for the order check. pi is
// the record's point index (declared: the manifest declares it).
func (c *RecordChecker) checkSession(pi int, declared bool, line int, rec *Record, add func(field, format string, args ...any)) {
	cell := -1
	if declared && pi >= 0 && rec.Repeat >= 0 && rec.Repeat < c.repeats {
		cell = pi*c.repeats + rec.Repeat
	}
	sessions := c.m != nil && c.m.Workload.Sessions != nil
	switch {
	case (rec.Session == nil) != (rec.Turn == nil):
		add("session", "session and turn go together: a turn of a multi-turn session names both")
		return
	case rec.Session == nil:
		if sessions && (rec.Phase == PhaseMeasure || rec.Phase == PhaseWarmup) {
			add("session", "missing: every request of a session run (workload.sessions) names its session and turn")
		}
		return
	case !sessions:
		add("session", "only a run of multi-turn sessions (workload.sessions) names a session and turn")
		return
	case *rec.Session < 0 || *rec.Turn < 0:
		add("session", "session %d turn %d: must not be negative", *rec.Session, *rec.Turn)
		return
	}
	if w := c.workload; w != nil && rec.Item != nil && *rec.Item >= 0 && *rec.Item < w.n {
		it := w.turn(*rec.Item)
		switch {
		case it.session < 0:
			add("item", "session %d turn %d sends workload item %d, which states no session and turn", *rec.Session, *rec.Turn, *rec.Item)
		case int64(it.session) != *rec.Session || int64(it.turn) != *rec.Turn:
			add("turn", "session %d turn %d sends workload item %d, which is session %d turn %d", *rec.Session, *rec.Turn, *rec.Item, it.session, it.turn)
		case int64(it.msgs) != 2*int64(it.turn)+1:
			add("item", "workload item %d, turn %d, holds %d messages besides system ones; a turn carries the %d earlier questions and answers and its own question: %d", *rec.Item, it.turn, it.msgs, 2*it.turn, 2*int64(it.turn)+1)
		}
	}
	if cell < 0 {
		return
	}
	if c.sessions == nil {
		c.sessions = &sessionCheck{turns: map[sessionKey][]sessionTurn{}}
	}
	k := sessionKey{cell, rec.Phase == PhaseWarmup, *rec.Session}
	ts, seen := c.sessions.turns[k]
	if !seen {
		c.sessions.order = append(c.sessions.order, k)
	}
	sched := int64(noSched)
	if rec.ScheduledNS != nil {
		sched = *rec.ScheduledNS
	}
	c.sessions.turns[k] = append(ts, sessionTurn{*rec.Turn, rec.SentNS, rec.EndNS, sched, int32(min(line, 1<<31-1))})
}

// finishSessions checks every session's turns: each turn once, from 0 up
// without a gap, and each sent no earlier than the turn before it ended
// (a turn carries that turn's history, so it cannot have been sent
// before; a reordered file or a moved time is rejected). at reports a
// problem on a record's line.
func (c *RecordChecker) finishSessions(at func(line int, field, format string, args ...any)) {
	if c.sessions == nil {
		return
	}
	for _, k := range c.sessions.order {
		ts := c.sessions.turns[k]
		slices.SortStableFunc(ts, func(a, b sessionTurn) int { return cmp.Compare(a.turn, b.turn) })
		for i, t := range ts {
			switch {
			case t.turn != int64(i) && i > 0 && t.turn == ts[i-1].turn:
				at(int(t.line), "turn", "session %d turn %d appears twice (first on line %d)", k.session, t.turn, ts[i-1].line)
			case t.turn != int64(i):
				at(int(t.line), "turn", "session %d has turn %d but no turn %d: a session's turns run from 0 up", k.session, t.turn, i)
			case i > 0 && t.sent < ts[i-1].end:
				at(int(t.line), "sent_ns", "session %d turn %d was sent at %d, before turn %d ended at %d (line %d): a turn carries the previous turn's answer and waits for it", k.session, t.turn, t.sent, i-1, ts[i-1].end, ts[i-1].line)
			case i > 0 && c.rate && t.sched != ts[i-1].end:
				at(int(t.line), "scheduled_ns", "session %d turn %d is scheduled at %d, but a later turn of sessions arriving at a rate is scheduled when the turn before it ended: %d (line %d)", k.session, t.turn, t.sched, ts[i-1].end, ts[i-1].line)
			default:
				continue
			}
			break
		}
	}
	if c.rate {
		c.checkSessionArrivals(at)
	}
}

// checkSessionArrivals compares, in a run of sessions arriving at a rate,
// each cell's session starts (turn 0's scheduled_ns, relative to the
// first session's) with the arrival schedule regenerated from client.seed:
// one offset per session, drawn as capture draws a rate point's (the
// point's stream, measure phase). A session moved or numbered beyond the
// records is rejected; a dropped session leaves its turns missing, which
// the count check reports. The work is linear in the records: offsets
// are regenerated only up to the sessions recorded.
func (c *RecordChecker) checkSessionArrivals(at func(line int, field, format string, args ...any)) {
	if c.m.Client.Seed == nil {
		return
	}
	starts := map[int][]sessionStart{}
	var cells []int
	for _, k := range c.sessions.order {
		t0 := c.sessions.turns[k][0]
		if k.warmup || t0.turn != 0 || t0.sched == noSched {
			continue
		}
		if _, ok := starts[k.cell]; !ok {
			cells = append(cells, k.cell)
		}
		starts[k.cell] = append(starts[k.cell], sessionStart{k.session, t0.sched, t0.line})
	}
	for _, cell := range cells {
		ss := starts[cell]
		slices.SortFunc(ss, func(a, b sessionStart) int { return cmp.Compare(a.session, b.session) })
		pi := cell / c.repeats
		pt := &c.m.Load.Points[pi]
		if last := ss[len(ss)-1]; last.session >= int64(len(ss)) || last.session >= int64(c.m.Workload.Sessions.Sessions) {
			at(int(last.line), "session", "point %s repeat %d: session %d, but %d sessions have records (of %d in workload.sessions): sessions are numbered from 0 without a gap", pt.Name, cell%c.repeats, last.session, len(ss), c.m.Workload.Sessions.Sessions)
			continue
		}
		g := newScheduler(pt.Arrival, pt.Rate, pt.Burstiness, 0, *c.m.Client.Seed, scheduleStream(&phasePlan{pi: pi, phase: PhaseMeasure}))
		for i, s := range ss {
			exp, _ := g.next()
			if got := s.sched - ss[0].sched; got-exp > ScheduleToleranceNS || exp-got > ScheduleToleranceNS {
				at(int(s.line), "scheduled_ns", "point %s repeat %d: session %d starts %d ns after session 0, but the arrival schedule regenerated from client.seed says %d ns", pt.Name, cell%c.repeats, i, got, exp)
				break
			}
		}
	}
}

// sessionStart is a session's turn 0 as checkSessionArrivals keeps it.
type sessionStart struct {
	session, sched int64
	line           int32
}

// validateSessions checks workload.sessions against the load: a session
// run is closed-loop (each session waits for its own answers), without
// warmup or a duration, and every point sends the sessions' turns.
func validateSessions(ps *problems, m *Manifest) {
	s := m.Workload.Sessions
	if s == nil {
		return
	}
	if s.Format != ConversationsShareGPT {
		ps.add("workload.sessions.format", "must be %q, got %q", ConversationsShareGPT, s.Format)
	}
	if !sha256RE.MatchString(s.SHA256) {
		ps.add("workload.sessions.sha256", "must be 64 lowercase hex digits")
	}
	if s.History != HistoryDataset {
		ps.add("workload.sessions.history", "must be %q: a turn's history holds the dataset's answers, so every byte sent is in the workload", HistoryDataset)
	}
	if s.Sessions < 1 || s.Turns < s.Sessions {
		ps.add("workload.sessions", "sessions must be ≥ 1 and turns at least sessions (a session has a turn at least), got %d sessions, %d turns", s.Sessions, s.Turns)
	}
	if m.Load.Mode != ModeConcurrency && m.Load.Mode != ModeRate {
		ps.add("load.mode", "must be %q (sessions at once) or %q (sessions arriving at a rate) in a session run", ModeConcurrency, ModeRate)
	}
	for i, p := range m.Load.Points {
		if p.Arrival == ArrivalTrace {
			ps.add(fmt.Sprintf("load.points[%d].arrival", i), "a session run's sessions arrive by a seeded schedule, not %q", ArrivalTrace)
		}
	}
	if m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0 {
		ps.add("load.warmup", "must be empty in a session run")
	}
	for i, p := range m.Load.Points {
		if p.Requests != s.Turns || p.Duration != 0 {
			ps.add(fmt.Sprintf("load.points[%d].requests", i), "is %d (duration %s), but a session run sends the %d turns of workload.sessions, no duration", p.Requests, time.Duration(p.Duration), s.Turns)
		}
	}
}
