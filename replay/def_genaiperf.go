package replay

import "github.com/benchseal/benchseal/schema"

// genaiPerfDef is GenAI-Perf's definitions (docs/replay.md, "Peer
// definitions"): as
// AIPerf's, read from the same per-request fields, but the ITL is always
// recomputed and rounded to integer ns.
var genaiPerfDef = &genaiPerfDefinition{aiperfDefinition{info: info{
	tool:    schema.GenAIPerf,
	summary: "GenAI-Perf: ITL = round((latency − TTFT)/(OSL − 1)) (→ " + schema.MetricTPOT + "), numpy linear, ddof 0",
	help: `ttft = response_timestamps[0] − timestamp; latency = last response − timestamp; inter_token_latency =
round((latency − ttft)/(OSL − 1)) (Python round, half to even) when > 1 response and OSL > 1 (` + schema.MetricTPOT + `); duration = max last
response − min request timestamp; numpy linear percentiles, np.std (ddof 0). A one-token answer fails a TPOT (ITL)
limit, whatever the SLO states.`,
	aliases:      map[string]string{"time_to_first_token": schema.MetricTTFT, "request_latency": schema.MetricE2E, "inter_token_latency": schema.MetricTPOT},
	oneToken:     schema.OneTokenFail,
	oneTokenRule: "GenAI-Perf gives a one-token answer no inter_token_latency, so it fails an ITL (TPOT) limit",
}, roundITL: true}}

type genaiPerfDefinition struct{ aiperfDefinition }

// unmeasured: GenAI-Perf counts output tokens with its client tokenizer,
// so server usage counts give other token throughputs than it reported.
func (*genaiPerfDefinition) unmeasured(m *schema.Manifest) map[string]string {
	if m.Client.TokenCounts == "server-usage" {
		why := "GenAI-Perf counts output tokens with its client tokenizer; the records hold the server's usage counts"
		return map[string]string{schema.MetricOutputTokenThroughput: why, schema.MetricTotalTokenThroughput: why}
	}
	return nil
}

func init() { register(genaiPerfDef) }
