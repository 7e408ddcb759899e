package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// BenchmarkPack packs a run of 20,000 measured records (validation,
// sharding and compression of 4 shards).
func BenchmarkPack(b *testing.B) {
	run := artifacttest.WriteRun(b, filepath.Join(b.TempDir(), "run"), artifacttest.RunOptions{Requests: 5000})
	b.ReportAllocs()
	out := filepath.Join(b.TempDir(), "b")
	for b.Loop() {
		if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(out)
	}
}
