// The engine's counters between a point's scrapes against the records.

package artifact

import (
	"fmt"
	"strconv"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// checkServerCounters compares, for every tally (one point × repeat and
// one of its scrapes after the before scrape), the rise of the engine's
// counters between the two scrapes with what the records hold:
//
//   - the engine finished at least the ok records that had ended by the
//     tally's instant, less Slack of them (requests ending together that
//     it had not counted yet), and its prompt and generation token
//     counters rose by at least their input and output tokens, less Slack
//     times the most one record has (llama.cpp counts cached prompt
//     tokens apart: its two prompt counters are summed);
//   - by the after scrape it finished no more requests than the point
//     sent plus those the tally allows from elsewhere (Elsewhere; a
//     shard's engine serves other shards, so no upper bound there), and
//     generated no more tokens than the max_tokens sent for them
//     (OutputCap): the bound an engine without a request counter
//     (llama.cpp) is held to, so records dropped from its run show.
//
// The after scrape's histograms (full, the whole scrapes) bound the
// records' times from below (checkLatencyFloors).
//
// Token counts are compared whatever client.token_counts says: it is the
// signer's label, and every count it names is at most the engine's (usage
// is the engine's own count; a content chunk carries at least one
// generated token; a prompt's whitespace-separated words are at most its
// tokens, since tokenizers split at whitespace). A counter the engine does not
// expose is not compared. A counter that went down between the scrapes
// (an engine restart, or an edited before scrape) is compared from the
// baseline of earlier (the scrape taken before the point's before scrape,
// or the fresh scrape before the run): counters only grow, so its rise
// from there bounds the records from below as well; the upper bound on
// requests is then not held. Every
// problem names the point, repeat, counter, its rise and the records'
// sum.
//
// A counter that went down while both scrapes state the same
// process_start_time_seconds contradicts them: one process's counters
// only grow, so the "reset" is an edited scrape.
//
// A counter that went down across a restart (or with no start time
// stated) is compared from the earlier baseline only, and the point ×
// repeat is returned with the reason: its claims rest on records the
// counters do not hold (one edited before scrape, +1e9 and a new start
// time, left output ×16 MATCHED). Against the in-process simulator
// (simulated), which cannot restart, it is a problem.
func checkServerCounters(file string, tallies []schema.ScrapeTally, counters, full map[int]*servermetrics.Snapshot, engines map[int]string, earlier map[int]baseline, starts map[int]float64, simulated bool) ([]schema.Problem, []schema.CellReason) {
	var out []schema.Problem
	var notes []schema.CellReason
	for _, t := range tallies {
		b, s := counters[t.Before], counters[t.Scrape]
		engine := engines[t.Scrape]
		if b == nil || s == nil || engine == "" {
			continue
		}
		col, err := servermetrics.Delta(engine, []*servermetrics.Snapshot{b, s}, servermetrics.NoLoad)
		if err != nil {
			continue
		}
		rise := map[string]servermetrics.CounterDelta{}
		for _, d := range col.Counters {
			rise[d.Role] = d
		}
		if p, n := checkWentDown(file, col, starts, t, simulated); p != nil {
			out = append(out, *p)
		} else if n != "" {
			notes = append(notes, schema.CellReason{CellRef: schema.CellRef{Point: t.Point, Repeat: t.Repeat}, Reason: n})
		}
		fallback := map[string]bool{}
		if e, ok := earlier[t.Before]; ok {
			if ec, err := servermetrics.Delta(engine, []*servermetrics.Snapshot{e.snap, s}, servermetrics.NoLoad); err == nil {
				for _, d := range ec.Counters {
					if _, ok := rise[d.Role]; !ok {
						d.Metric += " (counted from " + e.field + ", taken before: it went down from the point's before scrape)"
						rise[d.Role], fallback[d.Role] = d, true
					}
				}
			}
		}
		field := "server_metrics.scrapes[" + strconv.Itoa(t.Scrape) + "]"
		when := "during"
		by := "that had ended " + digits.Decimal(float64(schema.CounterLagNS)/1e9) + " s before it was sent"
		if t.After {
			when = "after"
			if t.ByNS == 1<<63-1 {
				by = "(all of the point's)"
			}
		}
		say := func(d servermetrics.CounterDelta, verb string, records string, need float64) {
			out = append(out, schema.Problem{File: file, Field: field, Message: fmt.Sprintf(
				"point %q repeat %d: the engine's %s rose by %s between the scrape before the point (server_metrics.scrapes[%d]) and this scrape %s it, but the records hold %s %s: the engine "+countedPhrase+" %s %s",
				t.Point, t.Repeat, d.Metric, num(d.Delta), t.Before, when, records, by, verb, num(need))})
		}
		out = append(out, checkLatencyFloors(file, field, t, engine, full)...)
		checkRequestsAndOutput(t, rise, fallback, say)
		if c, ok := rise[servermetrics.RolePromptTokensCached]; ok && !fallback[servermetrics.RolePromptTokensCached] {
			checkCachedTokens(t, c, say)
		}
		if d, ok := rise[servermetrics.RolePromptTokens]; ok {
			if n, isLlama := servermetrics.Lookup(engine, servermetrics.RolePromptTokensCached); isLlama {
				c, ok := rise[servermetrics.RolePromptTokensCached]
				if !ok {
					continue // the cached tokens are not counted: no bound
				}
				d.Delta += c.Delta
				d.Metric += " + " + n.Metric
			}
			if need := float64(t.InputTokens - t.Slack*t.MaxInput); d.Delta < need {
				say(d, "at least", fmt.Sprintf("%d input tokens in %d ok requests", t.InputTokens, t.OK), need)
			}
		}
	}
	return out, notes
}

// checkRequestsAndOutput holds the rise of the engine's finished-requests
// and generated-tokens counters to t from below (the ok records that had
// ended, less Slack) and, at the after scrape, from above (Sent and
// Elsewhere; OutputCap). A counter compared from an earlier baseline
// (fallback) is held from below only: that rise includes requests before
// the point's.
func checkRequestsAndOutput(t schema.ScrapeTally, rise map[string]servermetrics.CounterDelta, fallback map[string]bool, say func(servermetrics.CounterDelta, string, string, float64)) {
	if d, ok := rise[servermetrics.RoleRequestSuccess]; ok {
		if need := float64(t.OK - t.Slack); d.Delta < need {
			say(d, "at least", fmt.Sprintf("%d ok requests", t.OK), need)
		}
		if t.After && t.Elsewhere >= 0 && !fallback[servermetrics.RoleRequestSuccess] {
			if most := float64(t.Sent + t.Elsewhere); d.Delta > most {
				say(d, upperBoundVerb, fmt.Sprintf("%d requests in all (any status; %d more allowed: %s)", t.Sent, t.Elsewhere, t.ElsewhereWhy), most)
			}
		}
	}
	if d, ok := rise[servermetrics.RoleGenerationTokens]; ok {
		if need := float64(t.OutputTokens - t.Slack*t.MaxOutput); d.Delta < need {
			say(d, "at least", fmt.Sprintf("%d output tokens in %d ok requests", t.OutputTokens, t.OK), need)
		}
		if t.After && t.OutputCap >= 0 && !fallback[servermetrics.RoleGenerationTokens] {
			if most := float64(t.OutputCap); d.Delta > most {
				say(d, upperBoundVerb, fmt.Sprintf("%d requests in all whose max_tokens, with those of the requests allowed from elsewhere (%s; the preflight probe's is %d), sum to %d output tokens", t.Sent, t.ElsewhereWhy, schema.ProbeOutputTokens, t.OutputCap), most)
			}
		}
	}
}

// checkCachedTokens holds the rise c of the engine's count of prompt
// tokens served from its cache, by t's after scrape, to the records' own
// reports of them from above: a warm cache presented cold (cached tokens
// zeroed, prompt_n raised) keeps the two prompt counters' sum but not
// this one. The requests outside the records (Elsewhere) may each have
// reused at most a prompt as long as the longest record's.
func checkCachedTokens(t schema.ScrapeTally, c servermetrics.CounterDelta, say func(d servermetrics.CounterDelta, verb, records string, need float64)) {
	if !t.After || t.Elsewhere < 0 || !t.CachedKnown {
		return
	}
	if most := float64(t.CachedTokens + t.Elsewhere*t.MaxInput); c.Delta > most {
		say(c, "at most", fmt.Sprintf("%d prompt tokens served from the cache in %d ok requests (the engine's own per-request reports; %d more requests allowed from elsewhere, up to %d tokens each)", t.CachedTokens, t.OK, t.Elsewhere, t.MaxInput), most)
	}
}

// checkWentDown says what a compared counter that went down between t's
// scrapes means: a problem when both scrapes state one process start time
// (one process's counters only grow) or the run is against the
// in-process simulator (simulated), else a note for verify (an engine
// restart, or nothing to tell).
func checkWentDown(file string, col *servermetrics.Column, starts map[int]float64, t schema.ScrapeTally, simulated bool) (*schema.Problem, string) {
	a, same, ok := counterWentDown(col, starts, t)
	if !ok {
		return nil, ""
	}
	if simulated {
		return &schema.Problem{File: file, Field: "server_metrics.scrapes[" + strconv.Itoa(t.Scrape) + "]", Message: fmt.Sprintf(
			"point %q repeat %d: the engine's %s went down between the scrape before the point (server_metrics.scrapes[%d]) and this one, but the run is against the in-process simulator (--simulate on client.command_line), one process whose counters only grow",
			t.Point, t.Repeat, a.Metric, t.Before)}, ""
	}
	if same {
		return &schema.Problem{File: file, Field: "server_metrics.scrapes[" + strconv.Itoa(t.Scrape) + "]", Message: fmt.Sprintf(
			"point %q repeat %d: the engine's %s went down between the scrape before the point (server_metrics.scrapes[%d]) and this one, but both state %s %s: the engine did not restart, and the counters of one process only grow",
			t.Point, t.Repeat, a.Metric, t.Before, servermetrics.ProcessStartMetric, num(starts[t.Before]))}, ""
	}
	why := "neither scrape states " + servermetrics.ProcessStartMetric + ", so nothing shows whether the engine restarted"
	_, b := starts[t.Before]
	if _, s := starts[t.Scrape]; b && s {
		why = "the engine restarted (" + servermetrics.ProcessStartMetric + " changed)"
	}
	return nil, fmt.Sprintf("server counters: point %q repeat %d: the engine's %s went down between server_metrics.scrapes[%d] and [%d] (%s): the records were compared with its counters only from a scrape taken before, lower bounds only, or not at all, so the claim recomputes from records that are the signer's word",
		t.Point, t.Repeat, a.Metric, t.Before, t.Scrape, why)
}

// counterWentDown returns the first compared counter that went down
// between t's scrapes (Delta reads it as a reset), if any, and whether
// both scrapes state one process start time.
func counterWentDown(col *servermetrics.Column, starts map[int]float64, t schema.ScrapeTally) (a servermetrics.Absent, same, ok bool) {
	b, okb := starts[t.Before]
	s, oks := starts[t.Scrape]
	for _, a := range col.Absent {
		if a.Reason == servermetrics.ReasonCounterReset && resetRoles[a.Role] {
			return a, okb && oks && b == s, true
		}
	}
	return servermetrics.Absent{}, false, false
}

// resetRoles are the counters compared with the records.
var resetRoles = map[string]bool{servermetrics.RoleRequestSuccess: true, servermetrics.RolePromptTokens: true,
	servermetrics.RolePromptTokensCached: true, servermetrics.RoleGenerationTokens: true}

// baseline is a scrape taken before a point's before scrape, and the
// manifest field naming it.
type baseline struct {
	snap  *servermetrics.Snapshot
	field string
}

func num(v float64) string { return digits.Decimal(v) }
