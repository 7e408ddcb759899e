package capture_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

func TestScheduleIsDeterministicFromSeed(t *testing.T) {
	for _, arr := range []string{schema.ArrivalConstant, schema.ArrivalPoisson, schema.ArrivalGamma} {
		a := capture.Schedule(arr, 50, 0.5, 1000, 0, 42, 3)
		b := capture.Schedule(arr, 50, 0.5, 1000, 0, 42, 3)
		c := capture.Schedule(arr, 50, 0.5, 1000, 0, 43, 3)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different schedules", arr)
		}
		if arr != schema.ArrivalConstant && slices.Equal(a, c) {
			t.Errorf("%s: different seeds, same schedule", arr)
		}
		if a[0] != 0 || len(a) != 1000 {
			t.Errorf("%s: first %d len %d", arr, a[0], len(a))
		}
	}
}

func TestScheduleMeanAndBurstiness(t *testing.T) {
	const n, rate = 200000, 100.0
	for _, tt := range []struct {
		arr   string
		burst float64
		cv    float64 // coefficient of variation of the gaps: 1/sqrt(shape)
	}{
		{schema.ArrivalConstant, 0, 0},
		{schema.ArrivalPoisson, 0, 1},
		{schema.ArrivalGamma, 1, 1},
		{schema.ArrivalGamma, 0.25, 2},
		{schema.ArrivalGamma, 4, 0.5},
	} {
		s := capture.Schedule(tt.arr, rate, tt.burst, n, 0, 1, 1)
		var sum, sq float64
		for i := 1; i < len(s); i++ {
			g := float64(s[i]-s[i-1]) / 1e9
			sum += g
			sq += g * g
		}
		m := sum / float64(n-1)
		cv := math.Sqrt(sq/float64(n-1)-m*m) / m
		if math.Abs(m-1/rate)/(1/rate) > 0.02 || math.Abs(cv-tt.cv) > 0.05 {
			t.Errorf("%s/%v: mean gap %.5f (want %.5f), cv %.3f (want %.3f)", tt.arr, tt.burst, m, 1/rate, cv, tt.cv)
		}
	}
}

func TestScheduleStopsAtDuration(t *testing.T) {
	s := capture.Schedule(schema.ArrivalConstant, 10, 0, 0, 2*time.Second, 1, 1)
	if len(s) != 20 || s[19] != int64(1900*time.Millisecond) {
		t.Fatalf("%d offsets, last %d", len(s), s[len(s)-1])
	}
}

func TestHostInfoFromFakeRoot(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/cpuinfo":              {Data: []byte("processor\t: 0\nmodel name\t: Test CPU 9000\nprocessor\t: 1\nmodel name\t: Test CPU 9000\n")},
		"proc/meminfo":              {Data: []byte("MemTotal:       1024 kB\nMemFree: 1 kB\n")},
		"proc/sys/kernel/osrelease": {Data: []byte("6.1.0-test\n")},
		"etc/os-release":            {Data: []byte("NAME=X\nPRETTY_NAME=\"Test OS 1\"\n")},
	}
	h := capture.HostInfo(fsys)
	want := schema.Host{CPU: "Test CPU 9000", Cores: 2, MemoryBytes: 1 << 20, OS: "Test OS 1", Kernel: "Linux 6.1.0-test"}
	if *h != want {
		t.Fatalf("%+v", *h)
	}
	if h := capture.HostInfo(fstest.MapFS{}); *h != (schema.Host{}) {
		t.Fatalf("empty root: %+v", *h)
	}
}

func TestQueryGPUParsesNvidiaSMI(t *testing.T) {
	run := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if name != "nvidia-smi" || !strings.HasPrefix(args[0], "--query-gpu=") {
			t.Fatalf("%s %v", name, args)
		}
		return []byte("NVIDIA H100 80GB HBM3, 81559 MiB, 550.54.15, 00000000:18:00.0\nNVIDIA H100 80GB HBM3, 81559 MiB, 550.54.15, 00000000:2A:00.0\n"), nil
	}
	var hw schema.Hardware
	if err := capture.QueryGPU(context.Background(), "nvidia-smi", run, &hw); err != nil {
		t.Fatal(err)
	}
	if hw.Accelerator != "NVIDIA H100 80GB HBM3" || hw.AcceleratorCount == nil || *hw.AcceleratorCount != 2 || hw.AcceleratorMemory != "81559 MiB" || hw.Driver != "NVIDIA 550.54.15" || len(hw.Details) != 1 {
		t.Fatalf("%+v", hw)
	}
	if err := capture.QueryGPU(context.Background(), "lspci", run, &hw); err == nil {
		t.Fatal("unknown tool accepted")
	}
}

func TestSyntheticItemsAreDeterministic(t *testing.T) {
	a := capture.SyntheticItems(1, 2, 3, 50, 10)
	b := capture.SyntheticItems(1, 2, 3, 50, 10)
	if !slices.EqualFunc(a, b, func(x, y capture.Item) bool { return x.Prompt == y.Prompt }) || len(strings.Fields(a[0].Prompt)) != 50 || a[0].Prompt == a[1].Prompt {
		t.Fatal("synthetic prompts not deterministic or wrong length")
	}
}
