package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// BenchmarkReadStream measures the client's per-chunk work on a 256-chunk
// vLLM-style stream: reading, framing and classifying each event.
func BenchmarkReadStream(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range 256 {
		fmt.Fprintf(&buf, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok%d "},"logprobs":null,"finish_reason":null}]}`+"\n\n", i)
	}
	buf.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":261,"completion_tokens":256}}` + "\n\ndata: [DONE]\n\n")
	data := buf.Bytes()
	sr := capture.NewSSEReader(nil, nil)
	clock := func() int64 { return time.Now().UnixNano() }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sr.Reset(bytes.NewReader(data), clock)
		res := capture.ReadStream(sr, 256)
		if len(res.Chunks) != 256 {
			b.Fatal(len(res.Chunks))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/chunk")
}

// BenchmarkCaptureClosedLoop runs the whole client against the in-process
// simulator with a near-zero latency model and reports the chunk rate and
// the process CPU per 1,000 chunks (client and simulator together; see
// scripts/bench.d/capture.sh for the client alone).
func BenchmarkCaptureClosedLoop(b *testing.B) {
	for _, conc := range []int{8, 64} {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			ts := fastSim(b, func(c *simulator.Config) {
				c.TimeScale = 1
				c.PrefillBase, c.PrefillPerToken = 0, 0
				c.DecodeBase, c.DecodePerRunning = 0, 0
				c.MaxRunning, c.QueueLimit = 4096, 4096
			})
			var chunks int64
			cpu0 := processCPU()
			i := 0
			for b.Loop() {
				o := baseOptions(b, ts.URL)
				o.OutDir = filepath.Join(b.TempDir(), fmt.Sprint("run", i))
				i++
				o.Probe = false
				o.Plan.OutputTokens = 128
				o.Plan.Points = []schema.Point{{Concurrency: conc, Requests: 4 * conc}}
				res, err := capture.Run(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				chunks += res.Chunks
			}
			cpu := processCPU() - cpu0
			b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(chunks)*1000/1000, "cpu-ms/1kchunks")
		})
	}
}

// BenchmarkCaptureEndpoint runs the client alone against the server at
// $BENCHSEAL_BENCH_ENDPOINT (skipped when unset), e.g. a simulator started
// with `benchseal simulate --time-scale 0.1`, so that CPU and
// allocation profiles (-cpuprofile, -memprofile) show only the client; see
// docs/capture.md. Each iteration is 8 requests per stream of 128 tokens.
func BenchmarkCaptureEndpoint(b *testing.B) {
	url := os.Getenv("BENCHSEAL_BENCH_ENDPOINT")
	if url == "" {
		b.Skip("BENCHSEAL_BENCH_ENDPOINT not set")
	}
	for _, conc := range []int{16, 64, 256, 1024} {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			var chunks int64
			cpu0 := processCPU()
			i := 0
			for b.Loop() {
				o := baseOptions(b, url)
				o.Request.Model = "benchseal-sim"
				o.OutDir = filepath.Join(b.TempDir(), fmt.Sprint("run", i))
				i++
				o.Probe = false
				o.Plan.InputTokens = 16
				o.Plan.OutputTokens = 128
				o.Plan.Points = []schema.Point{{Concurrency: conc, Requests: 8 * conc}}
				res, err := capture.Run(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				chunks += res.Chunks
			}
			cpu := processCPU() - cpu0
			b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(chunks), "cpu-ms/1kchunks")
		})
	}
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}
