package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// fixtures lists, per tool, the fixture files of one import: each tool's
// registration (schema.PeerTool.Fixture).
var fixtures = func() map[string][]string {
	out := map[string][]string{}
	for _, pt := range schema.PeerTools {
		out[pt.Name] = pt.Fixture
	}
	return out
}()

func TestEveryToolHasAFixture(t *testing.T) {
	for _, tool := range Tools() {
		if _, ok := fixtures[tool]; !ok {
			t.Errorf("no fixture for %s", tool)
		}
	}
}

func TestImportEveryFixture(t *testing.T) {
	for _, tool := range Tools() {
		t.Run(tool, func(t *testing.T) {
			var paths []string
			for _, n := range fixtures[tool] {
				paths = append(paths, filepath.Join(importtest.FixtureDir(tool), n))
			}
			files, err := ReadFiles(paths)
			if err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "run")
			if _, err := Import(context.Background(), tool, files, dest, Options{}); err != nil {
				t.Fatal(err)
			}
			// Every import validates, an external-evidence reference
			// without records (mlperf) included.
			if err := schema.ValidateRunDocuments(dest, 0); err != nil {
				t.Errorf("imported run does not validate: %v", err)
			}
			rd, err := schema.OpenRunDir(dest)
			if err != nil {
				t.Fatal(err)
			}
			m := rd.Manifest()
			if m.Evidence != schema.EvidenceImported || m.Source == nil || m.Source.Tool != tool {
				t.Errorf("manifest evidence %q source %+v", m.Evidence, m.Source)
			}
			if len(m.Source.Files) != len(files) || len(rd.Attachments) != len(files) {
				t.Errorf("source files %d, attachments %d, want %d", len(m.Source.Files), len(rd.Attachments), len(files))
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(dest, schema.AttachmentsDir, filepath.Base(f.Name)))
				if err != nil || string(b) != string(f.Data) {
					t.Errorf("attachment %s not kept byte for byte", f.Name)
				}
			}
			if os.Getenv("KEEP") != "" {
				os.CopyFS(filepath.Join(os.Getenv("KEEP"), tool), os.DirFS(dest))
			}
		})
	}
}

func TestImportBadInputLeavesNothing(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "run")
	_, err := Import(context.Background(), "vllm", []ingest.File{{Name: "x.json", Data: []byte(`{"duration": 1, "completed": `)}}, dest, Options{})
	if !errors.Is(err, ingest.ErrBadInput) {
		t.Fatalf("err = %v, want ErrBadInput", err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("something was left at %s", dest)
	}
	entries, _ := os.ReadDir(filepath.Dir(dest))
	if len(entries) != 0 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestOverlayAndSetRemoveUnknown(t *testing.T) {
	files := importtest.Load(t, "llmperf", fixtures["llmperf"]...)
	dest := filepath.Join(t.TempDir(), "run")
	opts := Options{
		Overlay: []byte(`{"engine": {"name": "groq-lpu"}, "notes": {"who": "test"}}`),
		Set:     []string{"hardware.accelerator=H100", "hardware.accelerator_count=8", "engine.version=1.0", "decoding.temperature=0"},
	}
	if _, err := Import(context.Background(), "llmperf", files, dest, opts); err != nil {
		t.Fatal(err)
	}
	rd, err := schema.OpenRunDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	m := rd.Manifest()
	if m.Hardware.Accelerator != "H100" || m.Hardware.AcceleratorCount == nil || *m.Hardware.AcceleratorCount != 8 || m.Engine.Version != "1.0" || m.Engine.Name != "groq-lpu" {
		t.Fatalf("overlay not applied: %+v %+v", m.Hardware, m.Engine)
	}
	if m.Decoding.Temperature == nil || *m.Decoding.Temperature != 0 {
		t.Fatalf("decoding.temperature not set")
	}
	for _, u := range m.Unknown {
		switch u {
		case "hardware.accelerator", "hardware.accelerator_count", "engine.version", "engine.name", "decoding.temperature":
			t.Errorf("%s still listed as unknown", u)
		}
	}
}

func TestUnknownToolFails(t *testing.T) {
	if _, err := Import(context.Background(), "nope", []ingest.File{{Name: "a", Data: []byte("{}")}}, filepath.Join(t.TempDir(), "r"), Options{}); err == nil {
		t.Fatal("want error")
	}
}
