package replay_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// Replay recomputes every metric of a run from its records, here under
// benchseal's canonical definitions and, for comparison with a vLLM
// report, under vLLM's. The result is the same on any machine.
func ExampleReplay() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "benchseal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A small synthetic run directory (capture and import write real ones).
	run := filepath.Join(dir, "run")
	opts := synth.DefaultOptions()
	opts.Requests, opts.Points, opts.Repeats, opts.Warmup, opts.WorkloadItems = 80, []float64{2, 8}, 1, 2, 20
	if _, _, err := synth.WriteRun(ctx, run, opts, false); err != nil {
		log.Fatal(err)
	}
	rd, err := schema.OpenRunDir(run)
	if err != nil {
		log.Fatal(err)
	}
	for _, defs := range []string{"benchseal", "vllm"} {
		res, err := replay.Replay(ctx, rd, replay.Options{Definitions: defs})
		if err != nil {
			log.Fatal(err)
		}
		for _, pr := range res.Results {
			ttft, _ := pr.Lookup("ttft_ns.p99")
			f, _ := ttft.Float64()
			fmt.Printf("%s %s repeat %d: %d sent, %d ok, ttft p99 %.3f ms\n", res.Definitions, pr.Point, pr.Repeat, pr.Counts.Sent, pr.Counts.OK, f/1e6)
		}
	}
	// Output:
	// benchseal c2 repeat 0: 40 sent, 38 ok, ttft p99 97.196 ms
	// benchseal c8 repeat 0: 40 sent, 40 ok, ttft p99 89.188 ms
	// vllm c2 repeat 0: 40 sent, 38 ok, ttft p99 88.425 ms
	// vllm c8 repeat 0: 40 sent, 40 ok, ttft p99 87.246 ms
}
