package verify_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

// BenchmarkVerifyBundle verifies a signed bundle of 20,000 measured
// records (4 shards) with its claims recomputed; bytes/s counts the
// uncompressed layers. Compare runs with benchstat, or count instructions
// under callgrind (GODEBUG=asyncpreemptoff=1) on a loaded machine.
func BenchmarkVerifyBundle(b *testing.B) {
	p := artifacttest.PackRun(b, filepath.Join(b.TempDir(), "b"), artifacttest.RunOptions{Requests: 5000})
	s := artifacttest.Publisher(b)
	if _, err := artifact.Sign(context.Background(), p, s); err != nil {
		b.Fatal(err)
	}
	bu, err := artifact.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, l := range bu.Layers() {
		size += l.UncompressedSize
	}
	bu.Close()
	v, err := verify.NewVerifier([]*artifact.PublicKey{s.Public()}, verify.WithClaimChecker(replay.ClaimChecker{}))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), p, verify.Policy{}); err != nil {
			b.Fatal(err)
		}
	}
}
