package guidellm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/benchseal/benchseal/importer/ingest"

	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

var fixture = []string{"qwen3_4b_concurrent_benchmarks.json"}

func TestParseFixture(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 4 {
		t.Fatalf("records = %d, want 4", len(res.Records))
	}
	importtest.Write(t, Tool, files, res)
}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 133, Mismatched: 0, NotRecomputable: 0, NotRecomputableMetrics: nil})
	importtest.WantDocRow(t, "GuideLLM qwen3_4b", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"request_start": 1772470696.6802611`, `"request_start": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"request_end": 1772470721.5881217`, `"request_end": 1772470600.5881217`), Want: []string{name, "requests.successful[", "negative"}},
		importtest.BadInput{Name: "missing timings", Files: importtest.Replace(t, good, 0, `"timings":`, `"x_timings":`), Want: []string{name, "info.timings", "missing"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `"first_token_iteration": 1772470696.8517828`, `"first_token_iteration": 1772470696851.7828`), Want: []string{name, "first_token_iteration"}},
		importtest.BadInput{Name: "huge token_iterations", Files: importtest.Replace(t, good, 0, `"token_iterations": 1024`, `"token_iterations": 1000000000000000000`), Want: []string{name, "requests.successful[0].info.timings.token_iterations", "output tokens + 1"}},
		// Padding the request inflates its stored bytes, not its
		// output tokens: 6.4 M iterations beside 100 kB of padding for
		// 1024 output tokens (under the per-byte bound).
		importtest.BadInput{Name: "padded token_iterations", Files: importtest.Replace(t, importtest.Replace(t, good, 0, `"token_iterations": 1024`, `"token_iterations": 6400000`), 0, `"request_id": "6f420373`, `"pad": "`+strings.Repeat("x", 100000)+`", "request_id": "6f420373`), Want: []string{name, "requests.successful[0].info.timings.token_iterations", "more than the request's output tokens + 1 (1025)"}},
		importtest.BadInput{Name: "fractional token_iterations", Files: importtest.Replace(t, good, 0, `"token_iterations": 1024`, `"token_iterations": 10.5`), Want: []string{name, "info.timings.token_iterations", "not a whole"}},
		importtest.BadInput{Name: "no benchmarks", Files: []ingest.File{{Name: "b.json", Data: []byte(`{"benchmarks": []}`)}}, Want: []string{"b.json", "no benchmarks"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func TestYAMLReportImportsLikeJSON(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	y, err := jsonToYAML(good[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	rj, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	ry, err := Parse([]ingest.File{{Name: "benchmarks.yaml", Data: y}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rj.Records) != len(ry.Records) || len(rj.Claims.Points[0].Metrics) != len(ry.Claims.Points[0].Metrics) {
		t.Fatalf("yaml import differs: %d/%d records", len(ry.Records), len(rj.Records))
	}
	for i, c := range rj.Claims.Points[0].Metrics {
		if ry.Claims.Points[0].Metrics[i] != c {
			t.Errorf("claim %d: yaml %+v, json %+v", i, ry.Claims.Points[0].Metrics[i], c)
		}
	}
	for i := range rj.Records {
		if rj.Records[i].SentNS != ry.Records[i].SentNS || rj.Records[i].EndNS != ry.Records[i].EndNS {
			t.Errorf("record %d times differ", i)
		}
	}
}

// jsonToYAML re-encodes JSON as YAML, keeping number texts.
func jsonToYAML(b []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var n yaml.Node
	toNode(&n, v)
	return yaml.Marshal(&n)
}

func toNode(n *yaml.Node, v any) {
	switch x := v.(type) {
	case map[string]any:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kn, vn := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &yaml.Node{}
			toNode(vn, x[k])
			n.Content = append(n.Content, kn, vn)
		}
	case []any:
		n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		for _, e := range x {
			en := &yaml.Node{}
			toNode(en, e)
			n.Content = append(n.Content, en)
		}
	case json.Number:
		n.Kind, n.Value = yaml.ScalarNode, x.String()
		n.Tag = "!!float"
		if !strings.ContainsAny(x.String(), ".eE") {
			n.Tag = "!!int"
		}
	case string:
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!str", x, yaml.DoubleQuotedStyle
	case bool:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", fmt.Sprint(x)
	case nil:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
	}
}

func FuzzParse(f *testing.F) {
	good := importtest.Load(f, Tool, fixture...)
	// Hostile counts: a token_iterations a replay would expand into that
	// many events.
	for _, n := range []string{"1000000000000000000", "1e300", "-1", "137857"} {
		f.Add(bytes.Replace(good[0].Data, []byte(`"token_iterations": 1024`), []byte(`"token_iterations": `+n), 1))
	}
	importtest.FuzzParse(f, Tool, good, 0, Parse)
}

// TestHugeIterationCountFailsTheReplay: a run whose kept GuideLLM
// token_iterations is beyond the bound (a bundle's records edited past the
// importer) fails the replay under GuideLLM's definitions with an error
// naming the record and field, instead of allocating that many events
// (it panicked: makeslice: len out of range). 1026 iterations for 1024
// output tokens is within the per-byte bound a padding field inflates, and
// still refused.
func TestHugeIterationCountFailsTheReplay(t *testing.T) {
	for _, n := range []string{"1000000000000000000", "1026"} {
		t.Run(n, func(t *testing.T) {
			files := importtest.Load(t, Tool, fixture...)
			res, err := Parse(files)
			if err != nil {
				t.Fatal(err)
			}
			dir := importtest.Write(t, Tool, files, res)
			p := filepath.Join(dir, schema.RecordsFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := bytes.Replace(b, []byte(`"token_iterations":1024`), []byte(`"token_iterations":`+n), 1)
			if bytes.Equal(edited, b) {
				t.Fatal("edit did not apply")
			}
			if err := os.WriteFile(p, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := schema.OpenRunDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = replay.ClaimChecker{}.CheckClaims(context.Background(), rd)
			if err == nil || !strings.Contains(err.Error(), "token_iterations") || !strings.Contains(err.Error(), "6f420373-53e6-4635-9d98-195849a15ab9") {
				t.Fatalf("replay of token_iterations %s: %v, want an error naming the record and field", n, err)
			}
		})
	}
}

func FuzzStream(f *testing.F) {
	importtest.FuzzStream(f, importtest.Load(f, Tool, fixture...), 0, Stream)
}
