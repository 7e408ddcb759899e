package synth

import (
	"fmt"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// manifest describes the synthetic run.
func (g *gen) manifest(workloadSum string, items int) *schema.Manifest {
	o := g.opts
	epoch := time.Unix(0, o.EpochUnixNS).UTC()
	finish := epoch.Add(time.Duration(g.clock))
	seed := int64(o.Seed)
	zero := 0.0
	per, total, _ := o.Split()
	m := &schema.Manifest{
		Schema:      schema.ManifestSchemaV1,
		RunID:       fmt.Sprintf("synth-%s-seed%d-%d", o.Mode, o.Seed, total),
		Title:       fmt.Sprintf("Synthetic %s sweep, %d measured requests (seed %d)", o.Mode, total, o.Seed),
		StartTime:   epoch.Format(time.RFC3339Nano),
		FinishTime:  finish.Format(time.RFC3339Nano),
		EpochUnixNS: o.EpochUnixNS,
		Evidence:    schema.EvidenceSynthetic,
		Client: schema.Client{
			Name:        "benchseal-synth",
			Version:     ModelVersion,
			Location:    "same-host",
			Boundary:    schema.BoundaryClientStreaming,
			Seed:        &seed,
			TokenCounts: "server-usage",
		},
		Hardware: schema.Hardware{
			Accelerator:      "none (synthetic queueing model)",
			AcceleratorCount: schema.Count(1),
		},
		Engine: schema.Engine{
			Name:        "benchseal-synth-server",
			Version:     ModelVersion,
			Parallelism: schema.Parallelism{Tensor: 1},
			PrefixCache: schema.CacheDisabled,
		},
		Model: schema.Model{
			Name:      "synthetic/decoder-7b",
			Revision:  "synthetic-v" + ModelVersion,
			Precision: "bf16",
		},
		Decoding: schema.Decoding{
			Streaming:   true,
			Temperature: &zero,
			MaxTokens:   maxTokens,
			Endpoint:    "/v1/completions",
		},
		Workload: schema.Workload{
			SHA256:       workloadSum,
			Items:        items,
			Description:  "synthetic prompts with log-normal input and output lengths",
			InputTokens:  &schema.LengthDist{Kind: "lognormal", Min: 16, Max: 4096},
			OutputTokens: &schema.LengthDist{Kind: "lognormal", Min: 1, Max: maxTokens},
		},
		Load: schema.Load{
			Mode:           o.Mode,
			Warmup:         schema.Warmup{Requests: o.Warmup},
			Repeats:        o.Repeats,
			RequestTimeout: schema.Duration(requestTimeout),
		},
		SLO: schema.SLO{
			TTFT:     schema.Duration(500 * time.Millisecond),
			E2E:      schema.Duration(10 * time.Second),
			TPOT:     schema.Duration(60 * time.Millisecond),
			OneToken: schema.OneTokenPass,
		},
		Unknown: []string{"hardware.driver", "hardware.runtime"},
		Notes: map[string]string{
			"synth": fmt.Sprintf("server model v%s: %d batch slots, FIFO admission, prefill %v + %v/token, decode step %v + %v per running sequence; failures: %s%% error, %s%% cancelled, %s%% rejected at random, timeouts after %v; %s%% stalls",
				ModelVersion, slots, prefillBase, prefillPerToken, stepBase, stepPerSeq, digits.Places(pError*100, 1), digits.Places(pCancel*100, 1), digits.Places(pRejectRnd*100, 1), requestTimeout, digits.Places(pStall*100, 1)),
		},
	}
	if o.Mode == schema.ModeRate {
		m.Load.MaxOutstanding = maxOutstanding
	}
	for i, p := range o.Points {
		pt := schema.Point{Name: o.pointName(p), Requests: per[i]}
		if o.Mode == schema.ModeRate {
			pt.Rate = p
			pt.Arrival = schema.ArrivalPoisson
		} else {
			pt.Concurrency = int(p)
		}
		m.Load.Points = append(m.Load.Points, pt)
	}
	return m
}
