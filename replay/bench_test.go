package replay

import (
	"context"
	"flag"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// benchRun names a run directory for BenchmarkReplayRunDir to replay instead
// of a generated one (for profiling the 1,000,000-request run of issue #4).
var benchRun = flag.String("benchrun", "", "run directory replayed by BenchmarkReplayRunDir")

// BenchmarkReplay replays a 20,000-request synthetic run (about 200,000
// chunk timestamps) held in memory: the engine alone, without decoding.
func BenchmarkReplay(b *testing.B) {
	run := genRun(1, 20000)
	slo := &SLOSpec{TTFTNS: ptr(int64(2e8)), TPOTNS: ptr(int64(5e7)), OneToken: "pass"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Replay(context.Background(), run, Options{SLO: slo}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayRunDir replays a run directory end to end: zstd
// decompression, line splitting, record decoding and the metric engine.
// By default it generates a 50,000-request synthetic run (about 1.9M chunk
// timestamps); -benchrun replays an existing run instead.
func BenchmarkReplayRunDir(b *testing.B) {
	dir := *benchRun
	if dir == "" {
		dir = zstdSynthRun(b, 50000)
	}
	run, err := schema.OpenRunDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Replay(context.Background(), run, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
