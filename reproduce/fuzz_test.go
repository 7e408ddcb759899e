package reproduce

import (
	"bytes"
	"io"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// FuzzBuildTest: whatever manifest and workload file a hostile publisher
// signed, BuildTest returns a test or an error, never panics, and a test
// it returns is one capture accepts (its plan normalizes).
func FuzzBuildTest(f *testing.F) {
	b, err := schema.MarshalDocument(syntheticManifest())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, []byte(`{"prompt":"hi","output_tokens":2}`+"\n"), false)
	f.Add(bytes.Replace(b, []byte(`"synthetic"`), []byte(`"prompts.jsonl"`), 1), []byte(`{"messages":[{"role":"user","content":"x"}]}`), true)
	f.Add(bytes.Replace(b, []byte("0.25 fraction"), []byte("NaN fraction"), 1), []byte{}, false)
	f.Fuzz(func(t *testing.T, manifest, workload []byte, ship bool) {
		m, err := schema.DecodeManifest(bytes.NewReader(manifest), "manifest.json")
		if err != nil {
			return
		}
		src := Source{Manifest: m}
		if ship {
			src.Workload = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(workload)), nil }
		}
		tt, err := BuildTest(src, 0)
		if err != nil {
			return
		}
		p := tt.Plan
		if err := p.Normalize(); err != nil {
			t.Fatalf("BuildTest returned a plan capture refuses: %v", err)
		}
	})
}
