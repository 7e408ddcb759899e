package replay

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/servermetrics"
)

func TestServerAttainmentSaysWhyAbsent(t *testing.T) {
	ms := func(v int64) *int64 { v *= 1e6; return &v }
	for _, tc := range []struct {
		name string
		c    *servermetrics.Column
		slo  SLOSpec
		want []string // per entry: metric, then "" or part of the reason
	}{
		{"no limits: no entries", &servermetrics.Column{Engine: servermetrics.EngineVLLM}, SLOSpec{}, nil},
		{"TGI has no TTFT histogram", &servermetrics.Column{Engine: servermetrics.EngineTGI}, SLOSpec{TTFTNS: ms(200)},
			[]string{"ttft", "tgi exposes no ttft histogram"}},
		{"histogram missing from a scrape", &servermetrics.Column{Engine: servermetrics.EngineVLLM,
			Absent: []servermetrics.Absent{{Role: servermetrics.RoleE2E, Metric: "vllm:e2e_request_latency_seconds", Reason: "missing from the scrape after the point"}}},
			SLOSpec{E2ENS: ms(500)}, []string{"e2e", "missing from the scrape after the point"}},
		{"no observations", &servermetrics.Column{Engine: servermetrics.EngineVLLM,
			Histograms: []servermetrics.HistogramDelta{{Role: servermetrics.RoleTPOT, Metric: "vllm:request_time_per_output_token_seconds"}}},
			SLOSpec{TPOTNS: ms(50)}, []string{"tpot", "observed no tpot"}},
		{"exact at an edge", &servermetrics.Column{Engine: servermetrics.EngineVLLM,
			Histograms: []servermetrics.HistogramDelta{{Role: servermetrics.RoleTTFT, Metric: "m", Count: 4,
				Under: []servermetrics.EdgeShare{{Edge: 0.1, Share: 0.25}, {Edge: 0.2, Share: 0.75}}}}},
			SLOSpec{TTFTNS: ms(200)}, []string{"ttft", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serverAttainment(tc.c, tc.slo)
			if len(got)*2 != len(tc.want) {
				t.Fatalf("%d entries %+v, want %d", len(got), got, len(tc.want)/2)
			}
			for i, a := range got {
				metric, why := tc.want[2*i], tc.want[2*i+1]
				if a.Metric != metric || (why == "") != (a.Reason == "") || !strings.Contains(a.Reason, why) {
					t.Errorf("entry %d %+v, want metric %s reason containing %q", i, a, metric, why)
				}
				if why == "" && (!a.A.Exact || a.A.Lo != 0.75) {
					t.Errorf("attainment %+v, want exactly 0.75", a.A)
				}
			}
		})
	}
}
