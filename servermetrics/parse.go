package servermetrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Conditions of this package's errors, one sentinel each.
var (
	// ErrTooLarge: a scrape is larger than MaxScrapeBytes.
	ErrTooLarge = fmt.Errorf("server metrics: scrape larger than %d bytes", MaxScrapeBytes)
	// ErrMalformed: a scrape is not the Prometheus text exposition format,
	// or a metric in it is not what its type says.
	ErrMalformed = errors.New("malformed scrape")
	// ErrTooFewScrapes: Delta needs a scrape before and one after.
	ErrTooFewScrapes = errors.New("too few scrapes")
	// ErrNoEngineMetrics: no metric of a known engine in the scrapes.
	ErrNoEngineMetrics = errors.New("server metrics: no known engine metrics (vLLM, SGLang, TGI or llama.cpp names) in the scrapes")
)

// MaxScrapeBytes bounds one scrape read by Parse.
const MaxScrapeBytes = 16 << 20

// Snapshot is one scrape of an engine's /metrics, every family's series
// summed over their labels (engines, data-parallel ranks, finish
// reasons), keyed by family name.
type Snapshot struct {
	// AtNS is when the scrape was taken, in the run's clock (ns since its
	// epoch); the caller sets it.
	AtNS     int64
	Families map[string]*Family
}

// Family is one metric family summed over its series.
type Family struct {
	Kind string
	// Sum is the sum over series of a counter's or gauge's value; Max the
	// largest single series (a per-engine fraction such as KV-cache use).
	Sum, Max float64
	// Hist is set for a histogram.
	Hist *Hist
	// Series holds each series' value (a counter or gauge) or count (a
	// histogram) by its label set, so a reset of one series is seen even
	// when another grows by more; Cums holds a histogram series'
	// cumulative bucket counts.
	Series map[string]float64
	Cums   map[string][]float64
	// Bad says why the family gives no number (a sum over its series or
	// of a histogram's observations that is not finite); "" when it does.
	Bad string
}

// seriesKey is a series' label set: its name=value pairs sorted by name
// (the text parser keeps them in the scrape's order, which may differ
// between scrapes).
func seriesKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"\xff"+l.GetValue())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\xfe")
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// overflowReason is Family.Bad of a sum over series that overflows.
const overflowReason = "the sum over its series is not a finite number (it overflows)"

// Hist is a cumulative histogram: Cum[i] observations were at most
// Bounds[i] (finite edges, ascending); Count includes those above the
// last edge.
type Hist struct {
	Bounds []float64
	Cum    []float64
	Count  float64
	Sum    float64
}

// ParseFamilies reads one scrape in the Prometheus text exposition
// format into its metric families, per series, as expfmt gives them: at
// most MaxScrapeBytes, and a panic of the text parser an ErrMalformed
// error. Parse sums them over their labels; package energy keeps each
// device's series apart.
func ParseFamilies(r io.Reader) (map[string]*dto.MetricFamily, error) {
	lr := &io.LimitedReader{R: r, N: MaxScrapeBytes + 1}
	fams, err := textToFamilies(lr)
	if lr.N <= 0 {
		return nil, ErrTooLarge
	}
	if err != nil {
		return nil, errcond.Errorf(ErrMalformed, "server metrics: parse exposition: %w", err)
	}
	return fams, nil
}

// Parse reads one scrape in the Prometheus text exposition format. Only
// families with a TYPE line of counter, gauge or histogram are kept; a
// histogram whose series disagree on their bucket edges is an error.
func Parse(r io.Reader) (*Snapshot, error) {
	fams, err := ParseFamilies(r)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Families: map[string]*Family{}}
	for name, mf := range fams {
		f, err := family(mf)
		if err != nil {
			return nil, errcond.Errorf(ErrMalformed, "server metrics: metric %s: %w", name, err)
		}
		if f != nil {
			s.Families[name] = f
		}
	}
	return s, nil
}

func family(mf *dto.MetricFamily) (*Family, error) {
	switch mf.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_GAUGE:
		f := &Family{Kind: KindGauge, Max: math.Inf(-1), Series: map[string]float64{}}
		if mf.GetType() == dto.MetricType_COUNTER {
			f.Kind = KindCounter
		}
		for _, m := range mf.GetMetric() {
			v := m.GetGauge().GetValue()
			if f.Kind == KindCounter {
				v = m.GetCounter().GetValue()
			}
			if !finite(v) {
				return nil, fmt.Errorf("value %s is not a finite number", digits.Shortest(v))
			}
			f.Sum += v
			f.Max = max(f.Max, v)
			f.Series[seriesKey(m)] += v
		}
		if len(mf.GetMetric()) == 0 {
			f.Max = 0
		}
		if !finite(f.Sum) {
			f.Bad = overflowReason
		}
		return f, nil
	case dto.MetricType_HISTOGRAM:
		h := &Hist{}
		f := &Family{Kind: KindHistogram, Hist: h, Series: map[string]float64{}, Cums: map[string][]float64{}}
		for i, m := range mf.GetMetric() {
			mh := m.GetHistogram()
			var bounds, cum []float64
			for _, b := range mh.GetBucket() {
				if math.IsInf(b.GetUpperBound(), +1) {
					continue
				}
				bounds = append(bounds, b.GetUpperBound())
				cum = append(cum, float64(b.GetCumulativeCount()))
			}
			if !slices.IsSorted(bounds) {
				return nil, fmt.Errorf("bucket edges not ascending: %s", digits.ShortestList(bounds))
			}
			if i == 0 {
				h.Bounds, h.Cum = bounds, make([]float64, len(bounds))
			} else if !slices.Equal(bounds, h.Bounds) {
				return nil, fmt.Errorf("series have different bucket edges (%s, %s)", digits.ShortestList(h.Bounds), digits.ShortestList(bounds))
			}
			for j := range cum {
				h.Cum[j] += cum[j]
			}
			h.Count += float64(mh.GetSampleCount())
			h.Sum += mh.GetSampleSum()
			k := seriesKey(m)
			f.Series[k] += float64(mh.GetSampleCount())
			if old, ok := f.Cums[k]; ok {
				for j := range cum {
					cum[j] += old[j]
				}
			}
			f.Cums[k] = cum
		}
		switch {
		case !finite(h.Sum) && f.Bad == "":
			f.Bad = "the sum of its observations is not a finite number"
		case !finite(h.Count) && f.Bad == "":
			f.Bad = overflowReason
		}
		return f, nil
	}
	return nil, nil
}

// lookup finds the family a Name refers to, accepting a counter exposed
// as "x_total" under a TYPE line of "x" and the reverse.
func (s *Snapshot) lookup(n Name) (*Family, bool) {
	if s == nil {
		return nil, false
	}
	for _, name := range []string{n.Metric, strings.TrimSuffix(n.Metric, "_total"), n.Metric + "_total"} {
		if f, ok := s.Families[name]; ok && f.Kind == n.Kind {
			return f, true
		}
	}
	return nil, false
}

// DetectEngine names the engine whose metrics the snapshot holds: the
// one with the most known names present ("" when none is).
func DetectEngine(s *Snapshot) string {
	best, n := "", 0
	for _, e := range Engines {
		k := 0
		for _, nm := range Names {
			if nm.Engine == e {
				if _, ok := s.lookup(nm); ok {
					k++
				}
			}
		}
		if k > n {
			best, n = e, k
		}
	}
	return best
}

// textToFamilies runs expfmt's text parser, turning a panic inside it
// into an error: the parser of v0.67 dereferences nil on some malformed
// input (testdata/fuzz/FuzzParse holds one), and a scrape is untrusted.
func textToFamilies(r io.Reader) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if v := recover(); v != nil {
			fams, err = nil, fmt.Errorf("malformed exposition (the text parser failed: %v)", v)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// Gauge returns a gauge of the engine by role (RoleWaiting, RoleRunning,
// …), summed over its series; ok is false when the snapshot does not
// hold it.
func (s *Snapshot) Gauge(engine, role string) (float64, bool) {
	for _, n := range Names {
		if n.Engine == engine && n.Role == role && n.Kind == KindGauge {
			if f, ok := s.lookup(n); ok {
				return f.Sum, true
			}
		}
	}
	return 0, false
}

// Counters returns s reduced to the counter families of the engines
// Names knows, what a comparison of counters between two scrapes reads,
// so that many scrapes can be held at once.
func (s *Snapshot) Counters() *Snapshot {
	out := &Snapshot{AtNS: s.AtNS, Families: map[string]*Family{}}
	for _, n := range Names {
		if n.Kind != KindCounter {
			continue
		}
		for _, name := range []string{n.Metric, strings.TrimSuffix(n.Metric, "_total"), n.Metric + "_total"} {
			if f, ok := s.Families[name]; ok && f.Kind == KindCounter {
				out.Families[name] = f
			}
		}
	}
	return out
}
