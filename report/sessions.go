package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// SessionMeaning says what the session column holds, wherever it is
// printed.
const SessionMeaning = "sessions = the point's multi-turn sessions (records naming session and turn): ttft by turn over the turns that ended ok with content; a session's duration runs from its first turn's send to its last turn's end"

// sessionRows prints a point's session column (nil: not a session run) as
// rows of their own: the sessions, the ttft of each turn, the durations.
func sessionRows(p *replay.PointResult) []row {
	var out []row
	if t := prefixText(p.PrefixExpected); t != "" {
		out = append(out, row{"prefix cache expected", t, "tokens"})
	}
	s := p.Sessions
	if s == nil {
		return out
	}
	out = append(out, row{"sessions", fmt.Sprintf("%d sessions, %d with every turn ok; %s", s.Sessions, s.Complete, SessionMeaning), ""})
	for _, t := range s.ByTurn {
		name := fmt.Sprintf("turn %d ttft", t.Turn)
		if why, ok := s.NullReasons[schema.MetricTTFT]; ok {
			out = append(out, row{name, fmt.Sprintf("%d requests, %d ok; %s", t.Requests, t.OK, NullText(why)), ""})
			continue
		}
		out = append(out, row{name, fmt.Sprintf("%d requests, %d ok; %s", t.Requests, t.OK, distText(distCells(t.TTFT, nsToMS))), "ms"})
	}
	if why, ok := s.NullReasons["duration_ns"]; ok {
		out = append(out, row{"session duration", NullText(why), ""})
	} else {
		out = append(out, row{"session duration", distText(distCells(s.DurationNS, nsToMS)), "ms"})
	}
	return out
}

// sessionsJSON is a point's session column as the "sessions" object of
// the replay JSON contract.
type sessionsJSON struct {
	Sessions    num        `json:"sessions"`
	Complete    num        `json:"complete"`
	ByTurn      []turnJSON `json:"by_turn"`
	DurationNS  object     `json:"duration_ns"`
	NullReasons *object    `json:"null_reasons,omitempty"`
}

type turnJSON struct {
	Turn     num    `json:"turn"`
	Requests num    `json:"requests"`
	OK       num    `json:"ok"`
	TTFT     object `json:"ttft_ns"`
}

func newSessionsJSON(s *replay.SessionResult) sessionsJSON {
	j := sessionsJSON{Sessions: intNum(s.Sessions), Complete: intNum(s.Complete), ByTurn: make([]turnJSON, 0, len(s.ByTurn)), DurationNS: distJSON(s.DurationNS)}
	for _, t := range s.ByTurn {
		j.ByTurn = append(j.ByTurn, turnJSON{intNum(t.Turn), intNum(t.Requests), intNum(t.OK), distJSON(t.TTFT)})
	}
	if len(s.NullReasons) > 0 {
		nr := sortedObject(s.NullReasons)
		j.NullReasons = &nr
	}
	return j
}

// sessionCSV lists a point's session column as CSV metric paths and
// values ("sessions.count", "sessions.turn.1.ttft_ns.p50",
// "sessions.duration_ns.p99", …) and its null reasons.
func sessionCSV(s *replay.SessionResult) [][2]string {
	out := [][2]string{
		{"sessions.count", strconv.FormatInt(s.Sessions, 10)},
		{"sessions.complete", strconv.FormatInt(s.Complete, 10)},
	}
	for _, t := range s.ByTurn {
		pre := "sessions.turn." + strconv.FormatInt(t.Turn, 10) + "."
		out = append(out, [2]string{pre + "requests", strconv.FormatInt(t.Requests, 10)}, [2]string{pre + "ok", strconv.FormatInt(t.OK, 10)})
		for _, f := range replay.DistKeys {
			v, _ := t.TTFT.Field(f)
			out = append(out, [2]string{pre + schema.MetricPath(schema.MetricTTFT, f), csvNum(v)})
		}
	}
	for _, f := range replay.DistKeys {
		v, _ := s.DurationNS.Field(f)
		out = append(out, [2]string{"sessions.duration_ns." + f, csvNum(v)})
	}
	for _, k := range []string{schema.MetricTTFT, "duration_ns"} {
		if why, ok := s.NullReasons[k]; ok {
			out = append(out, [2]string{"sessions.null_reason." + k, why})
		}
	}
	return out
}

// p50Cell is the p50's position in distCells (replay.CoreDistKeys).
var p50Cell = slices.Index(replay.CoreDistKeys, "p50")

// sessionBrief is the session column on one line: the sessions, the
// ttft p50 of each turn and the sessions' duration p50, in ms (the
// numbers sessionRows prints).
func sessionBrief(s *replay.SessionResult) string {
	parts := []string{fmt.Sprintf("%d sessions (%d with every turn ok)", s.Sessions, s.Complete)}
	for _, t := range s.ByTurn {
		if why, ok := s.NullReasons[schema.MetricTTFT]; ok {
			parts = append(parts, fmt.Sprintf("turn %d ttft %s", t.Turn, NullText(why)))
			break
		}
		parts = append(parts, fmt.Sprintf("turn %d ttft p50 %s ms (n %d)", t.Turn, distCells(t.TTFT, nsToMS)[p50Cell], t.TTFT.N))
	}
	if why, ok := s.NullReasons["duration_ns"]; ok {
		parts = append(parts, "duration "+NullText(why))
	} else {
		parts = append(parts, fmt.Sprintf("duration p50 %s ms", distCells(s.DurationNS, nsToMS)[p50Cell]))
	}
	return strings.Join(parts, ", ")
}

// prefixText sets a trace replay's or session run's expected cacheable
// tokens against the cached tokens the server reported ("" when the point
// has none).
func prefixText(p *replay.PrefixExpected) string {
	if p == nil {
		return ""
	}
	if p.Overflow != "" {
		return "expected and reported cached tokens " + NullText(p.Overflow)
	}
	basis := "the trace's shared prefix blocks (workload items' cacheable_tokens: words, or the served model's tokens when fitted)"
	what := "ok requests"
	if p.Basis == replay.PrefixBasisSessions {
		basis = "each turn's history, the previous turn's prompt (its input_tokens, the server's count; the dataset's answer after it and a shared system prompt not counted)"
		what = "ok later turns after an ok turn"
	}
	s := fmt.Sprintf("expected %d of %d prompt tokens (%s) of %d %s: %s; ",
		p.ExpectedTokens, p.PromptTokens, percentText(p.ExpectedTokens, p.PromptTokens), p.Requests, what, basis)
	if p.Reported == 0 {
		return s + "the server reported no cached tokens"
	}
	return s + fmt.Sprintf("the server reported %d cached (%s) over the %d whose answers stated cached tokens", p.ReportedTokens, percentText(p.ReportedTokens, p.PromptTokens), p.Reported)
}

// percentText is a/b as a percentage with one decimal ("-" when b is 0).
func percentText(a, b int64) string {
	if b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(a)*100/float64(b), 'f', 1, 64) + " %"
}

// prefixCSV lists a point's expected and reported cached tokens as CSV
// metric paths and values.
func prefixCSV(p *replay.PrefixExpected) [][2]string {
	if p.Overflow != "" {
		return [][2]string{{"prefix_expected.basis", p.Basis}, {"prefix_expected.null_reason", p.Overflow}}
	}
	return [][2]string{
		{"prefix_expected.basis", p.Basis},
		{"prefix_expected.requests", strconv.FormatInt(p.Requests, 10)},
		{"prefix_expected.prompt_tokens", strconv.FormatInt(p.PromptTokens, 10)},
		{"prefix_expected.expected_tokens", strconv.FormatInt(p.ExpectedTokens, 10)},
		{"prefix_expected.reported_requests", strconv.FormatInt(p.Reported, 10)},
		{"prefix_expected.reported_tokens", strconv.FormatInt(p.ReportedTokens, 10)},
	}
}

// prefixExpectedJSON is them as the "prefix_expected" object of the
// replay JSON contract: prefixCSV's rows, the basis and a null reason as
// strings, the rest as numbers.
func prefixExpectedJSON(p *replay.PrefixExpected) object {
	var o object
	for _, kv := range prefixCSV(p) {
		if k := strings.TrimPrefix(kv[0], "prefix_expected."); k == "basis" || k == "null_reason" {
			o = append(o, member{k, text(kv[1])})
		} else {
			o = append(o, member{k, num(kv[1])})
		}
	}
	return o
}

// sessionView lays out a session column for the HTML report: the sessions
// and those complete, then per turn index its TTFT distribution and the
// session durations' (null with the reason where the text prints null).
func sessionView(s *replay.SessionResult) (scalars []scalarRow, dists []distRow) {
	scalars = append(scalars, scalarRow{Metric: "Sessions", Value: fmt.Sprintf("%d (%d with every turn ok)", s.Sessions, s.Complete), Text: true})
	row := func(name, key string, d replay.Dist) distRow {
		r := distRow{Name: name, Unit: "ms"}
		if why, ok := s.NullReasons[key]; ok {
			r.Null, r.Span = NullText(why), len(replay.CoreDistKeys)
		} else {
			r.Cells = distCells(d, nsToMS)
		}
		return r
	}
	for _, t := range s.ByTurn {
		dists = append(dists, row(fmt.Sprintf("turn %d ttft (%d requests, %d ok)", t.Turn, t.Requests, t.OK), schema.MetricTTFT, t.TTFT))
	}
	dists = append(dists, row("session duration", "duration_ns", s.DurationNS))
	return scalars, dists
}
