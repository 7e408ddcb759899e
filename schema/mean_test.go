package schema

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestWorkloadMeanIsStatedExactly: workload.*_tokens.mean was an integer
// (8.6 stated as 8). A fractional mean decodes as stated, and an older
// manifest's integer mean still decodes; a negative one is refused.
func TestWorkloadMeanIsStatedExactly(t *testing.T) {
	full, err := os.ReadFile("testdata/manifest/full.json")
	if err != nil {
		t.Fatal(err)
	}
	const old = `"mean": 512}`
	if !bytes.Contains(full, []byte(old)) {
		t.Fatalf("fixture lacks %q", old)
	}
	for _, c := range []struct {
		mean string
		want float64
		ok   bool
	}{{"512", 512, true}, {"8.6", 8.6, true}, {"-1", 0, false}} {
		doc := strings.Replace(string(full), old, `"mean": `+c.mean+`}`, 1)
		m, err := DecodeManifest(strings.NewReader(doc), "manifest.json")
		if !c.ok {
			if err == nil {
				t.Errorf("mean %s accepted", c.mean)
			}
			continue
		}
		if err != nil {
			t.Fatalf("mean %s: %v", c.mean, err)
		}
		if got := m.Workload.OutputTokens.Mean; got != c.want {
			t.Errorf("mean %s decoded as %v", c.mean, got)
		}
	}
}
