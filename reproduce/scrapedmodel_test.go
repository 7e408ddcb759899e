package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestCheckScrapedModel: a reproduction whose manifest states the
// original's model while its server scrapes' model_name labels name
// another is refused, naming the label, the scrape and both models; one
// whose scrapes name its model (beside another), or carry no model_name
// label, or that has no scrapes, is not judged by it.
func TestCheckScrapedModel(t *testing.T) {
	dir := t.TempDir()
	origDir := filepath.Join(dir, "orig")
	orig := synthRun(t, origDir, 3, 1, false, "")
	om := orig.Manifest()
	model := om.Model.Name
	for _, c := range []struct {
		name    string
		scrapes []string
		words   string
	}{
		{"another model", []string{"vllm:num_requests_running{model_name=\"benchseal-sim\"} 0\n", "vllm:num_requests_running{model_name=\"benchseal-sim\"} 2\n"},
			`its server scrapes serve model_name="benchseal-sim" (attachments/server-metrics/000000.prom), never its manifest's model.name "` + model + `"`},
		{"its model", []string{"vllm:num_requests_running{model_name=\"benchseal-sim\"} 0\n", "vllm:num_requests_running{model_name=\"" + model + "\"} 2\n"}, ""},
		{"no label", []string{"tgi_queue_size 0\n"}, ""},
		{"no scrapes", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			rd := anotherRun(t, origDir, d, 0.04, origDigest)
			if c.scrapes != nil {
				m := rd.Manifest()
				m.ServerMetrics = &schema.ServerMetrics{URL: "http://127.0.0.1:1/metrics"}
				if err := os.MkdirAll(filepath.Join(d, schema.AttachmentsDir, schema.ServerMetricsDir), 0o755); err != nil {
					t.Fatal(err)
				}
				for i, s := range c.scrapes {
					name := schema.ServerMetricsDir + "/00000" + string(rune('0'+i)) + ".prom"
					if err := os.WriteFile(filepath.Join(d, schema.AttachmentsDir, filepath.FromSlash(name)), []byte("# TYPE x gauge\n"+s), 0o644); err != nil {
						t.Fatal(err)
					}
					m.ServerMetrics.Scrapes = append(m.ServerMetrics.Scrapes, schema.Scrape{Point: m.Load.Points[0].Name, When: "before", File: name})
				}
				b, err := schema.MarshalDocument(m)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, schema.ManifestFile), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rd, err := schema.OpenRunDir(d)
			if err != nil {
				t.Fatal(err)
			}
			err = checkScrapedModel(om, rd)
			if c.words == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.words) || !strings.Contains(err.Error(), "(the original's \""+model+"\")") {
				t.Fatalf("error %v, want %q", err, c.words)
			}
		})
	}
}
