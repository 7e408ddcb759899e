package artifact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

// TestGPUBusyMinSecondsEdges: the busy-pair check applies to a pair
// whose readings are at least GPUBusyMinSeconds apart and to no shorter
// one. A 500 W device whose counter did not rise at all is rejected over
// 0.5 s and 0.501 s and passes, unchecked, over 0.499 s and 0 s.
func TestGPUBusyMinSecondsEdges(t *testing.T) {
	scrape := func(mJ int) *energy.Scrape {
		t.Helper()
		text := fmt.Sprintf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-0\"} %d\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-0\"} 500\n", mJ)
		s, err := energy.Parse(strings.NewReader(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sa, sb := scrape(1000), scrape(1000) // no rise: far below 500 W × the time, less 20 %
	for _, tc := range []struct {
		leastNS int64
		checked bool
	}{
		{0, false},
		{499_000_000, false},
		{499_999_999, false},
		{500_000_000, true},
		{501_000_000, true},
	} {
		t.Run(fmt.Sprint(tc.leastNS), func(t *testing.T) {
			a := schema.GPUScrape{FromNS: 1e9, AtNS: 1e9 + 1e6, File: "gpu-metrics/a.prom"}
			b := schema.GPUScrape{FromNS: a.AtNS + tc.leastNS, AtNS: a.AtNS + tc.leastNS + 1e6, File: "gpu-metrics/b.prom"}
			ps := checkBusyPair("manifest.json", 1, a, b, sa, sb)
			if got := len(ps) > 0; got != tc.checked {
				t.Fatalf("%.9f s apart: problems %v, want checked=%v (GPUBusyMinSeconds %v)", float64(tc.leastNS)/1e9, ps, tc.checked, GPUBusyMinSeconds)
			}
		})
	}
}
