package energy

import (
	"fmt"
	"slices"
	"strings"
)

// Sample is one scrape of one exporter and when it was taken, in the
// run's clock: FromNS when its request was sent, AtNS when the answer
// arrived. The exporter's readings are of an instant between
// FromNS − MaxAgeNS and AtNS (schema.GPUMetrics.MaxAge: an exporter
// serves what it last collected); the bounds use that span, the central
// value the midpoint of FromNS and AtNS (Interpolation). Scrape is nil
// for a scrape that failed.
type Sample struct {
	FromNS, AtNS int64
	MaxAgeNS     int64
	Scrape       *Scrape
}

// mid is where Interpolation places the sample's readings: the midpoint of
// its request and answer, whatever MaxAgeNS is (a reading's age widens
// only the bounds).
func (s Sample) mid() float64 { return float64(float64(s.FromNS)/2) + float64(float64(s.AtNS)/2) }

// readFrom is the earliest instant the sample's readings may describe, as
// schema.GPUMetrics.ReadingFrom: FromNS less MaxAgeNS, never below 0.
func (s Sample) readFrom() int64 { return max(0, s.FromNS-max(s.MaxAgeNS, 0)) }

// Bounded is a number with the bounds the evidence allows; Reason, when
// not empty, says why there is no number (Value, Lo and Hi are 0 then).
type Bounded struct {
	Value, Lo, Hi float64
	Reason        string
}

// Null is a Bounded with no number, for the reason given.
func Null(reason string) Bounded { return Bounded{Reason: reason} }

// Per is b divided by n (joules per token, per request); null when b is
// or when n is not positive, with what as the divisor's name.
func (b Bounded) Per(n float64, what string) Bounded {
	if b.Reason != "" {
		return b
	}
	if n <= 0 {
		return Null("no " + what + " in the window")
	}
	return Bounded{Value: b.Value / n, Lo: b.Lo / n, Hi: b.Hi / n}
}

// Scale is b times k (k ≥ 0): a price per kWh times kWh.
func (b Bounded) Scale(k float64) Bounded {
	if b.Reason != "" {
		return b
	}
	return Bounded{Value: b.Value * k, Lo: b.Lo * k, Hi: b.Hi * k}
}

// Interpolation states how Result.Energy's central value is found.
const Interpolation = "the counter is taken as linear in time between consecutive scrapes (each at the midpoint of its request and answer), read at the window's start and end; clamped into the bounds"

// Methods of Result.Method.
const (
	MethodCounter = "energy counter delta"
	// MethodPowerEstimate: no counter; a power gauge integrated.
	MethodPowerEstimate = "ESTIMATE: power gauge integrated over the scrapes (trapezoids between scrape midpoints); the gauge is an instant's reading, so energy between scrapes is not measured"
)

// Result is the energy of one window [StartNS, EndNS] on one exporter, or
// summed over several (Sum).
type Result struct {
	StartNS, EndNS int64
	// Energy in joules: Lo from the innermost scrapes (both inside the
	// window; 0 without two), Hi from the outermost (the latest wholly
	// before the start, the earliest wholly after the end), Value by
	// Interpolation.
	Energy Bounded
	// Estimate is set when Energy is a power gauge's integral
	// (MethodPowerEstimate), which bounds nothing for certain: Lo and Hi
	// are the window times the least and most power scraped.
	Estimate bool
	Method   string
	Exporter string
	// Devices are the IDs counted.
	Devices []string
	// PeakUtilPct and PeakMemBytes are the largest single device's
	// utilization and memory in use over the scrapes wholly inside the
	// window; nil without such a scrape or reading.
	PeakUtilPct, PeakMemBytes *float64
}

// Seconds is the window's length in seconds.
func (r Result) Seconds() float64 { return float64(r.EndNS-r.StartNS) / 1e9 }

// MeanPower is the energy divided by the window, in watts.
func (r Result) MeanPower() Bounded { return r.Energy.Per(r.Seconds(), "time") }

// Compute is the energy of the window [startNS, endNS] from one
// exporter's samples (in any order).
func Compute(samples []Sample, startNS, endNS int64) Result {
	r := Result{StartNS: startNS, EndNS: endNS, Method: MethodCounter}
	if endNS <= startNS {
		r.Energy = Null(fmt.Sprintf("the window [%d, %d] ns is empty", startNS, endNS))
		return r
	}
	var ok []Sample
	for _, s := range samples {
		if s.Scrape != nil {
			ok = append(ok, s)
		}
	}
	slices.SortStableFunc(ok, func(a, b Sample) int { return cmpInt(a.AtNS, b.AtNS) })
	b0, a0 := -1, -1
	for i, s := range ok {
		if s.AtNS <= startNS {
			b0 = i
		}
		if a0 < 0 && s.readFrom() >= endNS {
			a0 = i
		}
	}
	switch {
	case b0 < 0:
		r.Energy = Null("too few scrapes: none answered before the window's start")
		return r
	case a0 < 0:
		r.Energy = Null("too few scrapes: none was sent after the window's end")
		return r
	case a0 <= b0:
		r.Energy = Null("too few scrapes: the scrapes around the window overlap it")
		return r
	}
	span := ok[b0 : a0+1]
	first := span[0].Scrape
	r.Exporter = first.Exporter
	r.Devices = first.Measuring()
	if len(r.Devices) == 0 {
		r.Energy = Null("no accelerator energy counter or power gauge in the scrape before the window")
		return r
	}
	if why := sameDevices(span); why != "" {
		r.Energy = Null(why)
		return r
	}
	r.PeakUtilPct, r.PeakMemBytes = peaks(span, startNS, endNS)
	counter, why := hasCounter(first, r.Devices)
	switch {
	case why != "":
		r.Energy = Null(why)
	case counter:
		r.Energy = counterEnergy(span, r.Devices, startNS, endNS)
		if r.Energy.Reason == "" && rounded(span, r.Devices) {
			r.Method += RoundedNote
		}
	default:
		r.Method, r.Estimate = MethodPowerEstimate, true
		r.Energy = powerEstimate(span, r.Devices, startNS, endNS)
	}
	return r
}

// RoundedNote is added to Result.Method when a counter reading beyond
// 2^53 of its unit is not stated as an exact integer (an exponent, a
// fraction): its float64 is not the exporter's integer, and the bounds are
// widened by half a float64 step at each reading.
const RoundedNote = "; a counter reading beyond 2^53 of its unit is not an exact integer in the scrape's text: its resolution is a float64's there, and the bounds are widened by it"

// rounded reports whether a reading of ids in span is not exact.
func rounded(span []Sample, ids []string) bool {
	for _, s := range span {
		for _, id := range ids {
			if d := s.Scrape.Devices[id]; d != nil && d.EnergyRoundJ > 0 {
				return true
			}
		}
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sameDevices says which device appeared or vanished between consecutive
// scrapes of span ("" when none did).
func sameDevices(span []Sample) string {
	want := span[0].Scrape.Measuring()
	for _, s := range span[1:] {
		got := s.Scrape.Measuring()
		if slices.Equal(got, want) {
			continue
		}
		for _, id := range want {
			if !slices.Contains(got, id) {
				return fmt.Sprintf("device %s vanished between the scrapes around the window (missing from the scrape answered at %d ns)", id, s.AtNS)
			}
		}
		for _, id := range got {
			if !slices.Contains(want, id) {
				return fmt.Sprintf("device %s appeared between the scrapes around the window (first in the scrape answered at %d ns)", id, s.AtNS)
			}
		}
	}
	return ""
}

// hasCounter reports whether every device of s holds an energy reading
// (a device with a counter that is no reading: null, why says so), or
// none does (false: the power gauge stands in).
func hasCounter(s *Scrape, ids []string) (bool, string) {
	n := 0
	for _, id := range ids {
		d := s.Devices[id]
		if d.EnergyBad != "" {
			return false, "device " + id + ": " + d.EnergyBad
		}
		if d.EnergyJ != nil {
			n++
		}
	}
	switch n {
	case 0:
		return false, ""
	case len(ids):
		return true, ""
	}
	var missing []string
	for _, id := range ids {
		if s.Devices[id].EnergyJ == nil {
			missing = append(missing, id)
		}
	}
	return false, "no energy counter for device " + strings.Join(missing, ", ") + " while the others have one"
}

// total is the sum over ids of a reading (a counter's since the same
// device's in base, EnergySince), with the sum of their rounding; why says
// which device lacks it.
func total(s, base Sample, ids []string, counter bool) (v, round float64, why string) {
	for _, id := range ids {
		d := s.Scrape.Devices[id]
		switch {
		case counter && d.EnergyBad != "":
			return 0, 0, "device " + id + ": " + d.EnergyBad
		case counter && d.EnergyJ == nil:
			return 0, 0, fmt.Sprintf("device %s has no energy counter in the scrape answered at %d ns", id, s.AtNS)
		case counter:
			b := base.Scrape.Devices[id]
			if b == nil || b.EnergyJ == nil {
				return 0, 0, fmt.Sprintf("device %s has no energy counter in the scrape answered at %d ns", id, base.AtNS)
			}
			since, _ := d.EnergySince(b)
			v += since
			round += d.EnergyRoundJ
		case d.PowerW == nil:
			return 0, 0, fmt.Sprintf("device %s has no power gauge in the scrape answered at %d ns", id, s.AtNS)
		default:
			v += *d.PowerW
		}
	}
	return v, round, ""
}

func counterEnergy(span []Sample, ids []string, startNS, endNS int64) Bounded {
	tot := make([]float64, len(span))
	rnd := make([]float64, len(span))
	for i, s := range span {
		var why string
		if tot[i], rnd[i], why = total(s, span[0], ids, true); why != "" {
			return Null(why)
		}
		if i == 0 {
			continue
		}
		for _, id := range ids {
			prev, cur := span[i-1].Scrape.Devices[id], s.Scrape.Devices[id]
			if rise, round := cur.EnergySince(prev); rise+round < 0 {
				return Null(fmt.Sprintf("the energy counter of device %s went down between the scrapes answered at %d and %d ns (a reset or a wrap)", id, span[i-1].AtNS, s.AtNS))
			}
		}
	}
	last := len(span) - 1
	hi := tot[last] - tot[0] + rnd[last] + rnd[0]
	lo := 0.0
	bi, ai := -1, -1
	for i, s := range span {
		if bi < 0 && s.readFrom() >= startNS {
			bi = i
		}
		if s.AtNS <= endNS {
			ai = i
		}
	}
	if bi >= 0 && ai > bi {
		lo = max(0, tot[ai]-tot[bi]-rnd[ai]-rnd[bi])
	}
	mid := interpolate(span, tot, float64(endNS)) - interpolate(span, tot, float64(startNS))
	return Bounded{Value: min(max(mid, lo), hi), Lo: lo, Hi: hi}
}

// interpolate reads the piecewise-linear function through (span[i].mid,
// v[i]) at t, constant beyond the ends.
func interpolate(span []Sample, v []float64, t float64) float64 {
	if t <= span[0].mid() {
		return v[0]
	}
	for i := 1; i < len(span); i++ {
		m0, m1 := span[i-1].mid(), span[i].mid()
		if t <= m1 {
			if m1 == m0 {
				return v[i]
			}
			return v[i-1] + float64((v[i]-v[i-1])*(t-m0)/(m1-m0))
		}
	}
	return v[len(v)-1]
}

func powerEstimate(span []Sample, ids []string, startNS, endNS int64) Bounded {
	p := make([]float64, len(span))
	lo, hi := 0.0, 0.0
	for i, s := range span {
		var why string
		if p[i], _, why = total(s, s, ids, false); why != "" {
			return Null(why)
		}
		if i == 0 || p[i] < lo {
			lo = p[i]
		}
		hi = max(hi, p[i])
	}
	// The integral of the piecewise-linear power over [start, end]: sum
	// the trapezoids of the clipped pieces, constant beyond the ends.
	a, b := float64(startNS), float64(endNS)
	pts := []float64{a}
	for _, s := range span {
		if m := s.mid(); m > a && m < b {
			pts = append(pts, m)
		}
	}
	pts = append(pts, b)
	joules := 0.0
	for i := 1; i < len(pts); i++ {
		joules += float64((interpolate(span, p, pts[i-1]) + interpolate(span, p, pts[i])) / 2 * (pts[i] - pts[i-1]) / 1e9)
	}
	sec := (b - a) / 1e9
	return Bounded{Value: joules, Lo: lo * sec, Hi: hi * sec}
}

// peaks are the largest single-device utilization and memory over the
// scrapes of span wholly inside the window.
func peaks(span []Sample, startNS, endNS int64) (util, mem *float64) {
	for _, s := range span {
		if s.readFrom() < startNS || s.AtNS > endNS {
			continue
		}
		for _, d := range s.Scrape.Devices {
			if d.UtilPct != nil && (util == nil || *d.UtilPct > *util) {
				util = ptr(*d.UtilPct)
			}
			if d.MemBytes != nil && (mem == nil || *d.MemBytes > *mem) {
				mem = ptr(*d.MemBytes)
			}
		}
	}
	return util, mem
}

func ptr(v float64) *float64 { return &v }

// Sum adds the results of one window on several exporters (one per
// node): null when any is, with that endpoint's reason; an estimate when
// any is. Devices are prefixed with the endpoint's index ("0:GPU-…").
func Sum(rs []Result) Result {
	if len(rs) == 0 {
		return Result{Energy: Null("no accelerator metrics endpoint")}
	}
	out := Result{StartNS: rs[0].StartNS, EndNS: rs[0].EndNS, Method: MethodCounter, Exporter: rs[0].Exporter}
	var e Bounded
	for i, r := range rs {
		if r.Energy.Reason != "" {
			out.Energy = Null(fmt.Sprintf("endpoint %d: %s", i, r.Energy.Reason))
			return out
		}
		switch {
		case r.Estimate:
			out.Estimate, out.Method = true, MethodPowerEstimate
		case !out.Estimate && r.Method != MethodCounter:
			out.Method = r.Method // with RoundedNote
		}
		if r.Exporter != out.Exporter {
			out.Exporter = ""
		}
		e.Value += r.Energy.Value
		e.Lo += r.Energy.Lo
		e.Hi += r.Energy.Hi
		for _, id := range r.Devices {
			out.Devices = append(out.Devices, fmt.Sprintf("%d:%s", i, id))
		}
		out.PeakUtilPct = maxPtr(out.PeakUtilPct, r.PeakUtilPct)
		out.PeakMemBytes = maxPtr(out.PeakMemBytes, r.PeakMemBytes)
	}
	out.Energy = e
	return out
}

func maxPtr(a, b *float64) *float64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}
