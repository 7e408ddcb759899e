package replay

import (
	"context"
	"testing"
)

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
