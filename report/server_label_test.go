package report

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/servermetrics"
)

// TestServerTPOTAndITLRowsNameTheEngineHistogram: the server tpot/itl
// rows are the engine's own histograms, defined unlike the client's, and
// their labels say which.
func TestServerTPOTAndITLRowsNameTheEngineHistogram(t *testing.T) {
	p := &replay.PointResult{Server: &replay.ServerColumn{Scrapes: 2, Column: &servermetrics.Column{Engine: "vllm", Histograms: []servermetrics.HistogramDelta{
		{Role: servermetrics.RoleTPOT, Metric: "vllm:request_time_per_output_token_seconds"},
		{Role: servermetrics.RoleITL, Metric: "vllm:inter_token_latency_seconds"},
		{Role: servermetrics.RoleTTFT, Metric: "vllm:time_to_first_token_seconds"},
	}}}}
	var labels []string
	for _, r := range serverRows(p) {
		labels = append(labels, r.metric)
	}
	all := strings.Join(labels, "\n")
	for _, want := range []string{"server tpot (engine's own vllm:request_time_per_output_token_seconds)", "server itl (engine's own vllm:inter_token_latency_seconds)", "server ttft"} {
		if !strings.Contains(all, want) {
			t.Errorf("no row %q in %q", want, labels)
		}
	}
}
