package energy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func parseFile(t *testing.T, name string) *Scrape {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

func TestParseDCGMDocsScrapeOneDeviceWithItsUnits(t *testing.T) {
	s := parseFile(t, "dcgm_a100_mig.prom")
	if s.Exporter != ExporterDCGM {
		t.Errorf("exporter %q", s.Exporter)
	}
	ids := s.Measuring()
	if len(ids) != 1 || ids[0] != "GPU-34319582-d595-d1c7-d1d2-179bcfa61660" {
		t.Fatalf("measuring devices %v, want the one UUID (the MIG instance's rows hold no energy)", ids)
	}
	d := s.Devices[ids[0]]
	if d.IDFrom != "UUID" || d.Host != "ub20-a100-k8s" || d.Index != "0" {
		t.Errorf("device %+v", d)
	}
	if *d.EnergyJ != 319159.391 || *d.PowerW != 409.692 || *d.MemBytes != 4845*(1<<20) || *d.ClockMHz != 1215 {
		t.Errorf("energy %v J, power %v W, memory %v B, clock %v MHz", *d.EnergyJ, *d.PowerW, *d.MemBytes, *d.ClockMHz)
	}
	if d.UtilPct != nil {
		t.Errorf("util %v: the scrape has no DCGM_FI_DEV_GPU_UTIL", *d.UtilPct)
	}
	if _, ok := s.Devices["GPU-34319582-d595-d1c7-d1d2-179bcfa61660/13"]; ok {
		t.Errorf("the MIG instance is kept as a device though it holds no reading benchseal reads")
	}
}

func TestParseDCGMReadmeHasNoEnergy(t *testing.T) {
	s := parseFile(t, "dcgm_readme_blank.prom")
	if len(s.Measuring()) != 0 || s.Exporter != "" {
		t.Errorf("measuring %v exporter %q: the README's scrape has no energy or power", s.Measuring(), s.Exporter)
	}
	d := s.Devices["GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"]
	if d == nil || *d.ClockMHz != 139 {
		t.Fatalf("device %+v", d)
	}
}

func TestParseAMDNamesUnitsAndRounding(t *testing.T) {
	s := parseFile(t, "amd_handmade.prom")
	if s.Exporter != ExporterAMD {
		t.Errorf("exporter %q", s.Exporter)
	}
	d := s.Devices["SN0/0"]
	if d == nil {
		t.Fatalf("devices %v", s.Measuring())
	}
	if d.IDFrom != "serial_number" || d.Model != "xxxx" || d.Host != "node-a" {
		t.Errorf("device %+v", d)
	}
	// 2^53 + 2 µJ: float64's spacing there is 2 µJ, so the text may be
	// 1 µJ from the exporter's integer.
	if *d.EnergyJ != (1<<53+2)*1e-6 || d.EnergyRoundJ != 1e-6 {
		t.Errorf("energy %v J round %v J", *d.EnergyJ, d.EnergyRoundJ)
	}
	if *d.PowerW != 612 || *d.UtilPct != 97 || *d.MemBytes != 150000e6 || *d.ClockMHz != 2100 {
		t.Errorf("power %v util %v mem %v clock %v (the system clock, not the data clock)", *d.PowerW, *d.UtilPct, *d.MemBytes, *d.ClockMHz)
	}
	if s.Devices["SN1/0"].EnergyRoundJ != 0 {
		t.Errorf("a counter below 2^53 is exact")
	}
}

func TestParseCounterEdges(t *testing.T) {
	for _, c := range []struct {
		value string
		bad   string // substring of EnergyBad; "" for a reading
		round float64
	}{
		{"0", "", 0},
		{"9007199254740992", "", 0},                // 2^53: exact
		{"9007199254740993", "", 0},                // 2^53+1: an integer literal, exact
		{"9007199254740994", "", 0},                // 2^53+2: exact
		{"9.007199254740994e15", "", 1e-3},         // 2^53+2 as a float: half of a 2 mJ spacing
		{"4611686018427387904", "", 0},             // 2^62: exact
		{"9223372036854775791", "", 0},             // 2^63 − 17: the last integer below DCGM's blanks
		{"9223372036854775792", "DCGM blank", 0},   // DCGM_INT64_BLANK, 2^63 − 16
		{"9223372036854775794", "DCGM blank", 0},   // DCGM's "not supported", in the dcgm-exporter README
		{"9.223372036854774784e18", "", 512e-3},    // the largest float64 below 2^63, as a float
		{"9.3e18", "64-bit wrap", 0},               // a float at or above 2^63
		{"18446744073709551615", "DCGM blank", 0},  // 2^64 − 1
		{"18446744073709551616", "64-bit wrap", 0}, // 2^64: no uint64, read as the float 2^64
		{"-1", "negative", 0},
		{"NaN", "not a number", 0},
		{"+Inf", "not a number", 0},
	} {
		in := fmt.Sprintf("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} %s\n", c.value)
		s, err := Parse(strings.NewReader(in), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.value, err)
		}
		d := s.Devices["G"]
		switch {
		case c.bad == "" && (d.EnergyJ == nil || d.EnergyRoundJ != c.round):
			t.Errorf("%s: energy %v round %v bad %q, want a reading rounded %v", c.value, d.EnergyJ, d.EnergyRoundJ, d.EnergyBad, c.round)
		case c.bad != "" && (d.EnergyJ != nil || !strings.Contains(d.EnergyBad, c.bad)):
			t.Errorf("%s: energy %v bad %q, want no reading, %q", c.value, d.EnergyJ, d.EnergyBad, c.bad)
		}
	}
}

func TestParseRejectsTwoSeriesOfOneDevice(t *testing.T) {
	in := "DCGM_FI_DEV_POWER_USAGE{UUID=\"G\",gpu=\"0\"} 1\nDCGM_FI_DEV_POWER_USAGE{UUID=\"G\",gpu=\"1\"} 2\n"
	_, err := Parse(strings.NewReader(in), nil)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "two series") {
		t.Fatalf("err %v", err)
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	_, err := Parse(strings.NewReader("DCGM_FI_DEV_POWER_USAGE{UUID=\"G\" 1\n"), nil)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v", err)
	}
}

func TestCustomNamesReadFirstWithTheirUnit(t *testing.T) {
	rows, err := Custom{EnergyCounter: "node_energy_wh_total", EnergyUnit: "Wh", PowerGauge: "node_power_kw", PowerUnit: "kW"}.Names()
	if err != nil {
		t.Fatal(err)
	}
	in := "node_energy_wh_total{instance=\"n1\"} 2\nnode_power_kw{instance=\"n1\"} 1.5\n"
	s, err := Parse(strings.NewReader(in), rows)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Devices["{instance=n1}"]
	if s.Exporter != ExporterCustom || d == nil || *d.EnergyJ != 7200 || *d.PowerW != 1500 || d.IDFrom != "labels" {
		t.Fatalf("exporter %q device %+v", s.Exporter, d)
	}
	if _, err := (Custom{EnergyCounter: "x", EnergyUnit: "cal"}).Names(); !errors.Is(err, ErrBadUnit) {
		t.Errorf("unit cal: %v", err)
	}
	if _, err := (Custom{PowerGauge: "x", PowerUnit: "hp"}).Names(); !errors.Is(err, ErrBadUnit) {
		t.Errorf("unit hp: %v", err)
	}
}

// A named counter replaces DCGM's: a scrape with DCGM's counter but not
// the named one gives no energy and lists the named one as absent.
func TestNamedCounterReplacesTheBuiltInOne(t *testing.T) {
	rows, err := Custom{EnergyCounter: "no_such_metric"}.Names()
	if err != nil {
		t.Fatal(err)
	}
	in := "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} 5000\nDCGM_FI_DEV_POWER_USAGE{UUID=\"G\"} 100\n"
	s, err := Parse(strings.NewReader(in), rows)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Devices["G"]; d == nil || d.EnergyJ != nil || d.PowerW == nil || *d.PowerW != 100 {
		t.Fatalf("device %+v: want DCGM's power but not its counter", d)
	}
	if !slices.Equal(s.Absent, []string{"no_such_metric"}) {
		t.Errorf("absent %v", s.Absent)
	}
	if s, _ := Parse(strings.NewReader(in), nil); len(s.Absent) != 0 || s.Devices["G"].EnergyJ == nil {
		t.Errorf("without a named counter: absent %v, device %+v", s.Absent, s.Devices["G"])
	}
}

// dcgm is a scrape of devices with energy counters (mJ) and power (W).
func dcgm(mj map[string]float64, w float64) *Scrape {
	var b strings.Builder
	for id, v := range mj {
		fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=%q} %.0f\nDCGM_FI_DEV_POWER_USAGE{UUID=%q} %g\nDCGM_FI_DEV_GPU_UTIL{UUID=%q} %g\n", id, v, id, w, id, w/10)
	}
	s, err := Parse(strings.NewReader(b.String()), nil)
	if err != nil {
		panic(err)
	}
	return s
}

const sec = int64(1e9)

// steady: one device at 100 W, the counter exact, scrapes every second
// taking 10 ms each, from t=0 s to t=10 s.
func steady() []Sample {
	var out []Sample
	for i := int64(0); i <= 10; i++ {
		from := i * sec
		out = append(out, Sample{FromNS: from, AtNS: from + sec/100, Scrape: dcgm(map[string]float64{"G": float64(1_000_000 + i*100_000)}, 100)})
	}
	return out
}

func TestWindowBoundsAndInterpolation(t *testing.T) {
	// window [2.5 s, 6.5 s]: 4 s at 100 W = 400 J.
	r := Compute(steady(), 2500*sec/1000, 6500*sec/1000)
	e := r.Energy
	if e.Reason != "" {
		t.Fatal(e.Reason)
	}
	// outer: scrapes at 2 s and 7 s (500 J); inner: 3 s and 6 s (300 J).
	if e.Hi != 500 || e.Lo != 300 {
		t.Errorf("bounds [%v, %v], want [300, 500]", e.Lo, e.Hi)
	}
	if math.Abs(e.Value-400) > 1e-9 {
		t.Errorf("central %v, want 400", e.Value)
	}
	if p := r.MeanPower(); math.Abs(p.Value-100) > 1e-9 || p.Lo != 75 || p.Hi != 125 {
		t.Errorf("mean power %+v", p)
	}
	if r.Estimate || r.Method != MethodCounter || r.Exporter != ExporterDCGM || len(r.Devices) != 1 {
		t.Errorf("result %+v", r)
	}
	if r.PeakUtilPct == nil || *r.PeakUtilPct != 10 {
		t.Errorf("peak util %v", r.PeakUtilPct)
	}
	per := e.Per(200, "good tokens")
	if math.Abs(per.Value-2) > 1e-12 || per.Lo != 1.5 || per.Hi != 2.5 {
		t.Errorf("per good token %+v", per)
	}
	if z := e.Per(0, "good tokens"); z.Reason != "no good tokens in the window" {
		t.Errorf("per zero: %+v", z)
	}
}

func TestWindowWithNoInnerPairHasLowerBoundZero(t *testing.T) {
	r := Compute(steady(), 2100*sec/1000, 2900*sec/1000)
	if r.Energy.Reason != "" || r.Energy.Lo != 0 || r.Energy.Hi != 100 {
		t.Fatalf("%+v", r.Energy)
	}
}

func TestWindowNullReasons(t *testing.T) {
	reset := steady()
	reset[5].Scrape = dcgm(map[string]float64{"G": 10}, 100)
	vanish := steady()
	vanish[4].Scrape = dcgm(map[string]float64{"G": 1_400_000, "H": 5}, 100)
	blank := steady()
	blank[2].Scrape = dcgm(map[string]float64{"G": 9223372036854775794}, 100)
	for _, c := range []struct {
		name       string
		s          []Sample
		start, end int64
		want       string
	}{
		{"reset", reset, 2 * sec, 7 * sec, "went down"},
		{"appear", vanish, 2 * sec, 7 * sec, "device H appeared"},
		{"blank", blank, 2*sec + 50, 7 * sec, "DCGM blank"},
		{"none before", steady(), 0, 3 * sec, "none answered before"},
		{"none after", steady(), 2 * sec, 10*sec + 5, "none was sent after"},
		{"empty", steady(), 3 * sec, 3 * sec, "is empty"},
	} {
		r := Compute(c.s, c.start, c.end)
		if !strings.Contains(r.Energy.Reason, c.want) || r.Energy.Value != 0 {
			t.Errorf("%s: %+v, want the reason %q", c.name, r.Energy, c.want)
		}
	}
	// a device that vanishes: the reverse of appearing
	gone := steady()
	gone[0].Scrape = dcgm(map[string]float64{"G": 1_000_000, "H": 5}, 100)
	if r := Compute(gone, sec/10, 3*sec); !strings.Contains(r.Energy.Reason, "device H vanished") {
		t.Errorf("vanish: %+v", r.Energy)
	}
}

func TestWindowWithoutCounterIsAnEstimateFromPower(t *testing.T) {
	var s []Sample
	for i := int64(0); i <= 4; i++ {
		sc, err := Parse(strings.NewReader(fmt.Sprintf("DCGM_FI_DEV_POWER_USAGE{UUID=\"G\"} %d\n", 100+100*i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, Sample{FromNS: i * sec, AtNS: i * sec, Scrape: sc})
	}
	r := Compute(s, 0, 4*sec)
	// power 100→500 W linearly over 4 s: 1200 J.
	if !r.Estimate || r.Method != MethodPowerEstimate || math.Abs(r.Energy.Value-1200) > 1e-9 || r.Energy.Lo != 400 || r.Energy.Hi != 2000 {
		t.Fatalf("%+v", r)
	}
}

// dcgmText is one device's DCGM counter in mJ, spelled as given.
func dcgmText(lit string) *Scrape {
	s, err := Parse(strings.NewReader("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} "+lit+"\nDCGM_FI_DEV_POWER_USAGE{UUID=\"G\"} 4\n"), nil)
	if err != nil {
		panic(err)
	}
	return s
}

func TestRoundingWidensTheBounds(t *testing.T) {
	// counters above 2^53 mJ stated as floats: each reading may be 1 mJ
	// off.
	base := float64(1 << 54)
	var s []Sample
	for i := int64(0); i <= 3; i++ {
		s = append(s, Sample{FromNS: i * sec, AtNS: i * sec, Scrape: dcgmText(strconv.FormatFloat(base+float64(i*4000), 'e', -1, 64))})
	}
	r := Compute(s, sec/2, 5*sec/2)
	if r.Energy.Reason != "" {
		t.Fatal(r.Energy.Reason)
	}
	if r.Method != MethodCounter+RoundedNote || Sum([]Result{r}).Method != r.Method {
		t.Errorf("method %q: the rounding is not said", r.Method)
	}
	// outer 0→3 s: 12 J ± 2×2 mJ; inner 1→2 s: 4 J ∓ 4 mJ.
	if math.Abs(r.Energy.Hi-12.004) > 1e-9 || math.Abs(r.Energy.Lo-3.996) > 1e-9 {
		t.Errorf("bounds [%v, %v]", r.Energy.Lo, r.Energy.Hi)
	}
}

func TestSumAcrossEndpoints(t *testing.T) {
	a := Compute(steady(), 2*sec+sec/2, 6*sec+sec/2)
	b := Compute(steady(), 2*sec+sec/2, 6*sec+sec/2)
	s := Sum([]Result{a, b})
	if s.Energy.Hi != 1000 || s.Energy.Lo != 600 || len(s.Devices) != 2 || s.Devices[1] != "1:G" {
		t.Errorf("%+v", s)
	}
	bad := Compute(steady(), 0, 3*sec)
	if s := Sum([]Result{a, bad}); !strings.HasPrefix(s.Energy.Reason, "endpoint 1: too few scrapes") {
		t.Errorf("%+v", s.Energy)
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"dcgm_a100_mig.prom", "dcgm_readme_blank.prom", "amd_handmade.prom"} {
		b, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(strings.NewReader(string(b)), nil)
		if err != nil {
			return
		}
		for _, d := range s.Devices {
			if d.EnergyJ != nil && (*d.EnergyJ < 0 || math.IsInf(*d.EnergyJ, 0) || math.IsNaN(*d.EnergyJ)) {
				t.Fatalf("energy %v kept as a reading", *d.EnergyJ)
			}
		}
		Compute([]Sample{{FromNS: 0, AtNS: 1, Scrape: s}, {FromNS: 5, AtNS: 6, Scrape: s}, {FromNS: 10, AtNS: 11, Scrape: s}}, 2, 9)
	})
}

// TestReadingsUpToMaxAgeOldWidenTheBounds: with gpu_metrics.max_age a
// scrape's readings may describe any instant from its send time less
// max_age to its answer, so the scrapes that certainly bracket a window
// (and those certainly inside it) are further out (in).
func TestReadingsUpToMaxAgeOldWidenTheBounds(t *testing.T) {
	g := &schema.GPUMetrics{}
	files := map[string][]byte{}
	for i := int64(0); i <= 10; i++ {
		name := fmt.Sprintf("gpu-metrics/%06d.prom", i+1)
		files[name] = fmt.Appendf(nil, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} %d\n", 1_000_000+i*100_000)
		h := sha256.Sum256(files[name])
		g.Scrapes = append(g.Scrapes, schema.GPUScrape{Point: "c1", When: schema.ScrapeDuring, FromNS: i * sec, AtNS: i*sec + sec/100, File: name, SHA256: hex.EncodeToString(h[:])})
	}
	g.Endpoints = []schema.GPUEndpoint{{URL: "http://127.0.0.1:9400/metrics"}}
	read := func(name string) ([]byte, error) { return files[name], nil }
	for _, tc := range []struct {
		maxAge int64
		lo, hi float64
	}{
		{0, 300, 500},       // outer scrapes 2 s and 7 s, inner 3 s and 6 s
		{2 * sec, 100, 700}, // outer 2 s and 9 s (sent at 8.5 s or later), inner 5 s and 6 s
	} {
		g.MaxAge = schema.Duration(tc.maxAge)
		r := PointEnergy(g, read, "c1", 0, 2500*sec/1000, 6500*sec/1000)
		if r.Energy.Reason != "" || r.Energy.Lo != tc.lo || r.Energy.Hi != tc.hi {
			t.Errorf("max_age %d ns: energy %+v, want bounds [%v, %v]", tc.maxAge, r.Energy, tc.lo, tc.hi)
		}
	}
}

// TestExactCountersNearTheirEdges: integer counters beyond 2^53 mJ are
// subtracted exactly (a float64 holds 2^62 only to 1024 mJ), with no
// rounding; a counter back to 0 is a reset, null.
func TestExactCountersNearTheirEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		base uint64
	}{{"2^53+1", 1<<53 + 1}, {"2^62", 1 << 62}, {"2^63-17 at the last", 1<<63 - 17 - 12003}} {
		var s []Sample
		for i := uint64(0); i <= 3; i++ {
			s = append(s, Sample{FromNS: int64(i) * sec, AtNS: int64(i) * sec, Scrape: dcgmText(strconv.FormatUint(c.base+i*4001, 10))})
		}
		r := Compute(s, sec/2, 5*sec/2)
		if r.Energy.Reason != "" || r.Energy.Hi != 12.003 || r.Energy.Lo != 4.001 || r.Method != MethodCounter {
			t.Errorf("%s: energy %+v, want [4.001, 12.003] J exactly", c.name, r.Energy)
		}
		a, b := s[1].Scrape.Devices["G"], s[2].Scrape.Devices["G"]
		if rise, round := b.EnergySince(a); rise != 4.001 || round != 0 {
			t.Errorf("%s: rise %v ± %v J, want 4.001 exactly", c.name, rise, round)
		}
	}
	s := []Sample{
		{FromNS: 0, AtNS: 0, Scrape: dcgmText(strconv.FormatUint(1<<62, 10))},
		{FromNS: sec, AtNS: sec, Scrape: dcgmText("0")},
		{FromNS: 2 * sec, AtNS: 2 * sec, Scrape: dcgmText("100")},
	}
	if r := Compute(s, sec/2, 3*sec/2); !strings.Contains(r.Energy.Reason, "went down") {
		t.Errorf("reset to 0: %+v", r.Energy)
	}
}

// TestExactLiteralFollowsItsSeries: the exact integer is the series' own
// whatever the label order, escapes or a brace inside a value; two series
// near 2^62 differing by 1 mJ stay 1 mJ apart.
func TestExactLiteralFollowsItsSeries(t *testing.T) {
	in := "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{modelName=\"a\\\"}b\",UUID=\"G1\"} 4611686018427387905\n" +
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G2\",modelName=\"a\\\"}b\",} 4611686018427387904\n"
	s, err := Parse(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Devices["G1"], s.Devices["G2"]
	if rise, round := a.EnergySince(b); rise != 1e-3 || round != 0 {
		t.Errorf("G1 − G2 = %v ± %v J, want 0.001 exactly", rise, round)
	}
}

// TestMaxAgeWidensOnlyTheBounds: the central value places each scrape's
// readings at the midpoint of its request and answer whatever max_age is;
// an age of 30 s moves only the bounds. One device draws 150 W while
// scraped at 0, 1 and 2 s, then 90 W until the scrape after the point,
// sent 30 s (max_age) after the window's end. Placing the readings at the
// midpoint of [request − max_age, answer] read the later, idle rise into
// the window: 449.5 J, a mean power of 238 W above every gauge reading.
func TestMaxAgeWidensOnlyTheBounds(t *testing.T) {
	g := &schema.GPUMetrics{MaxAge: schema.Duration(30 * sec), Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:9400/metrics"}}}
	files := map[string][]byte{}
	for i, sc := range []struct{ fromNS, mj, w int64 }{{0, 0, 150}, {sec, 150_000, 150}, {2 * sec, 300_000, 150}, {32 * sec, 3_000_000, 90}} {
		name := fmt.Sprintf("gpu-metrics/%06d.prom", i+1)
		files[name] = fmt.Appendf(nil, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} %d\nDCGM_FI_DEV_POWER_USAGE{UUID=\"G\"} %d\n", sc.mj, sc.w)
		h := sha256.Sum256(files[name])
		g.Scrapes = append(g.Scrapes, schema.GPUScrape{Point: "c1", When: schema.ScrapeDuring, FromNS: sc.fromNS, AtNS: sc.fromNS + sec/100, File: name, SHA256: hex.EncodeToString(h[:])})
	}
	read := func(name string) ([]byte, error) { return files[name], nil }
	start, end := sec/100, 1900*sec/1000
	r := PointEnergy(g, read, "c1", 0, start, end)
	if r.Energy.Reason != "" {
		t.Fatal(r.Energy.Reason)
	}
	// Midpoints 0.005, 1.005, 2.005 s: 0.75 J at the start, 284.25 J at the end.
	if want := 283.5; math.Abs(r.Energy.Value-want) > 1e-9 {
		t.Errorf("central %v J, want %v", r.Energy.Value, want)
	}
	if p := r.MeanPower(); p.Value > 150 {
		t.Errorf("mean power %v W, above the highest gauge reading (150 W)", p.Value)
	}
	// Outer: the scrape answered at 0.01 s and the one sent at 32 s (its
	// readings from 2 s on); no pair certainly inside the window.
	if r.Energy.Lo != 0 || r.Energy.Hi != 3000 {
		t.Errorf("bounds [%v, %v], want [0, 3000]", r.Energy.Lo, r.Energy.Hi)
	}
}
