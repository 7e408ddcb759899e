package replay

import (
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// setOutputTokens sets pr.OutputTokens: the output tokens of the completed
// requests the definitions count (the peer definitions' own count, else
// the records'), or null with the reason when the source did not measure
// output_tokens (the reason that nulls output_token_throughput for that
// field; a missing window does not null a count).
func (g *group) setOutputTokens(pr *PointResult) {
	if gt := g.cfg.gate; gt != nil {
		if r := gt.fieldReasons[schema.MetricOutputTokenThroughput]; r != "" {
			pr.OutputTokens, pr.OutputTokensNullReason = Null, r
			return
		}
	}
	if g.peer != nil {
		pr.OutputTokens = Int(g.peer.outTok)
		return
	}
	pr.OutputTokens = Exact(new(big.Rat).SetInt(g.outTok.value()))
}
