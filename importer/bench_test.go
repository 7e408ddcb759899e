package importer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/benchseal/benchseal/importer/aiperf"
	"github.com/benchseal/benchseal/importer/genaiperf"
	"github.com/benchseal/benchseal/importer/guidellm"
	"github.com/benchseal/benchseal/importer/inferenceperf"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// syntheticAIPerf returns a profile_export.jsonl of n records: the lines
// of the run1 fixture over and over, each with a request id of its own.
func syntheticAIPerf(tb testing.TB, n int) []byte {
	tb.Helper()
	src := importtest.Load(tb, aiperf.Tool, "run1_profile_export.jsonl")[0].Data
	lines := ingest.SplitLines(src)
	var out bytes.Buffer
	key := []byte(`"x_request_id":"`)
	for i := 0; i < n; i++ {
		l := lines[i%len(lines)]
		j := bytes.Index(l, key) + len(key)
		out.Write(l[:j])
		fmt.Fprintf(&out, "%d-", i)
		out.Write(l[j:])
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// peakHeap samples the live heap every millisecond until stop is called,
// which returns the largest value seen, in bytes.
func peakHeap() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkImportAIPerfJSONL imports a 5,000-record (19 MB) synthetic
// AIPerf profile_export.jsonl and reports the peak live heap
// (peak-heap-MB) beside the input size (input-MB): streaming keeps the
// records out of memory, so the peak stays near the input's size.
func BenchmarkImportAIPerfJSONL(b *testing.B) {
	benchImport(b, aiperf.Tool, "profile_export.jsonl", syntheticAIPerf(b, 5000))
}

// BenchmarkImportGenAIPerf imports a 20,000-request (30 MB) synthetic
// GenAI-Perf profile_export.json over three experiments, stored out of
// order of start, and reports the peak live heap beside the input size.
func BenchmarkImportGenAIPerf(b *testing.B) {
	benchImport(b, genaiperf.Tool, "profile_export.json", syntheticGenAIPerf(b, 20000, 3))
}

// BenchmarkImportInferencePerf imports a 20,000-request (23 MB) synthetic
// per_request_lifecycle_metrics.json over three stages, stored out of
// order of start, and reports the peak live heap beside the input size.
func BenchmarkImportInferencePerf(b *testing.B) {
	benchImport(b, inferenceperf.Tool, "per_request_lifecycle_metrics.json", syntheticInferencePerf(b, 20000))
}

// BenchmarkImportGuideLLM imports a 5,000-request (32 MB) synthetic GuideLLM
// benchmarks.json over three benchmarks, stored out of order of start,
// and reports the peak live heap beside the input size.
func BenchmarkImportGuideLLM(b *testing.B) {
	benchImport(b, guidellm.Tool, "benchmarks.json", syntheticGuideLLM(b, 5000))
}

// benchImport imports data, written to a file called name, with tool's
// importer from the file (ReadFiles, Import) and reports the peak live
// heap (peak-heap-MB) beside the input size (input-MB).
func benchImport(b *testing.B, tool, name string, data []byte) {
	in := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		b.Fatal(err)
	}
	data = nil
	b.ReportAllocs()
	var peak uint64
	for i := 0; i < b.N; i++ {
		dest := filepath.Join(b.TempDir(), "run")
		runtime.GC()
		stop := peakHeap()
		files, err := ReadFiles([]string{in})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Import(context.Background(), tool, files, dest, Options{Set: []string{"model.name=synthetic"}}); err != nil {
			b.Fatal(err)
		}
		files = nil
		peak = max(peak, stop())
	}
	st, _ := os.Stat(in)
	b.ReportMetric(float64(st.Size())/1e6, "input-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
