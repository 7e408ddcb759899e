// An imported rate-mode point's stored window against its offered load.

package schema

import (
	"math"

	"github.com/benchseal/benchseal/internal/digits"
)

// WindowFalseAlarm bounds the probability that an honest open-loop run's
// n requests all arrive within a window the check below rejects.
const WindowFalseAlarm = 1e-9

// constantWindowSlack is the share of (n − 1) ÷ rate a constant-rate
// schedule's window may fall short of it: a tool's timer rounding, never
// a whole inter-arrival gap in a run of more than a hundred requests.
const constantWindowSlack = 0.01

// checkToolWindows checks, in Finish, the window a peer tool stored for
// each point × repeat of an imported rate-mode run (provenance.windows:
// vLLM's duration, which the rates are recomputed over) against the
// point's offered load: its n measured requests are sent at the declared
// rate, so the first and last sends lie (n − 1) ÷ rate apart at a
// constant rate, and for Poisson or gamma arrivals (shape = burstiness,
// 1 for Poisson) the span is a sum of n − 1 independent gaps, a gamma
// variable with that mean, whose lower tail P(span ≤ w) is at most
// exp(k·(1 + ln x − x)), x = w ÷ mean, k = (n − 1)·burstiness (the
// Chernoff bound). A window whose bound is below WindowFalseAlarm cannot
// hold the requests at the rate offered: the tool's window was shortened
// (a vLLM run at 1 req/s stating 1.33 s for 60 requests: 45 req/s). It
// cannot catch a window shortened by less than the arrivals' own spread.
func (c *RecordChecker) checkToolWindows(add func(field, format string, args ...any)) {
	m := c.m
	if !m.Imported() || m.Provenance == nil {
		return
	}
	c.checkWindowsHoldRequests(add)
	if m.Load.Mode != ModeRate {
		return
	}
	for i, p := range m.Load.Points {
		if !finite(p.Rate) || p.Rate <= 0 {
			continue
		}
		for r := range c.repeats {
			w, ok := m.Provenance.Window(p.Name, r)
			n := c.measured[i*c.repeats+r]
			if !ok || n < 2 || w.WindowNS <= 0 {
				continue
			}
			mean := float64(n-1) / p.Rate * 1e9 // ns
			x := float64(w.WindowNS) / mean
			short := false
			switch p.Arrival {
			case ArrivalConstant:
				short = x < 1-constantWindowSlack
			case ArrivalPoisson, ArrivalGamma:
				shape := 1.0
				if p.Arrival == ArrivalGamma && p.Burstiness > 0 {
					shape = p.Burstiness
				}
				k := float64(n-1) * shape
				short = x < 1 && k*(1+math.Log(x)-x) < math.Log(WindowFalseAlarm)
			}
			if short {
				add("provenance.windows", "point %q repeat %d: the tool's window %s (%s) holds its %d measured requests at %s req/s, but they were offered at %s req/s (%s arrivals), which spreads their sends over %s on average: a window this short has probability below %s",
					p.Name, r, Duration(w.WindowNS), w.How, n, digits.Sig(float64(n)/(float64(w.WindowNS)/1e9), 4), digits.Shortest(p.Rate), p.Arrival, Duration(int64(mean)), digits.Shortest(WindowFalseAlarm))
			}
		}
	}
}

// checkWindowsHoldRequests checks, in Finish, that each window a peer tool
// stored (provenance.windows) is at least its point × repeat's longest
// measured request (end_ns − sent_ns, the latency the tool stored): every
// tool whose window the importers keep (vLLM's and SGLang's duration,
// AIPerf's profiling phase, LLMPerf's completed count ÷ rate) times the
// whole run its requests were sent and answered in, so no request it
// measured outlasts it. A shorter window was shortened, and every rate
// recomputed over it inflated (a vLLM run whose longest request took
// 5.17 s stating a duration of 0.5 s: 20 req/s for 1.86).
func (c *RecordChecker) checkWindowsHoldRequests(add func(field, format string, args ...any)) {
	m := c.m
	for i, p := range m.Load.Points {
		for r := range c.repeats {
			w, ok := m.Provenance.Window(p.Name, r)
			long := c.longest[i*c.repeats+r]
			if ok && w.WindowNS < long {
				add("provenance.windows", "point %q repeat %d: the tool's window %s (%s) is shorter than the longest request it measured (%s, end_ns − sent_ns): the window covers every request the tool measured",
					p.Name, r, Duration(w.WindowNS), w.How, Duration(long))
			}
		}
	}
}
