package artifact_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/synth"
)

// Pack validates a run directory and writes it as an OCI image layout, one
// records layer per load point and repeat. The same run packed with the same
// created time gives the same bytes, so the same digest.
func ExamplePack() {
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

	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // e.g. from SOURCE_DATE_EPOCH
	res, err := artifact.Pack(ctx, run, filepath.Join(dir, "bundle"), artifact.PackOptions{Created: created})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range res.Layers {
		if l.Kind == artifact.KindRecords {
			fmt.Printf("%s: %s repeat %d, %d records\n", l.Title, l.Point, l.Repeat, l.Records)
		}
	}
	again, err := artifact.Pack(ctx, run, filepath.Join(dir, "bundle2"), artifact.PackOptions{Created: created})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same digest:", again.ManifestDigest == res.ManifestDigest)
	// Output:
	// records/c2/0.jsonl.zst: c2 repeat 0, 42 records
	// records/c8/0.jsonl.zst: c8 repeat 0, 42 records
	// same digest: true
}
