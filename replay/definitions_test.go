package replay

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

var update = flag.Bool("update", false, "rewrite the files derived from the definitions registry")

// derivedFiles renders what schema and docs derive from the registry:
// the definitions enum of the claims JSON Schema
// (which the plan schema refers to); and the SLO rule's rows of the metric
// tables of docs/metrics.md and docs/replay.md (GoodRequestRule,
// GoodputRule, AttainmentRule). cur holds each file's current contents.
func derivedFiles(t *testing.T, cur map[string][]byte) map[string][]byte {
	t.Helper()
	var names []string
	for _, d := range registry() {
		names = append(names, d.Name())
	}
	out := map[string][]byte{}

	enum := regexp.MustCompile(`("definitions": \{\n(\s*)"enum": \[\n)((?:\s*"[^"]*",?\n)*)(\s*\])`)
	for _, f := range []string{"../schema/jsonschema/claims.schema.json"} {
		m := enum.FindSubmatchIndex(cur[f])
		if m == nil {
			t.Fatalf("%s: no definitions enum", f)
		}
		indent := string(cur[f][m[4]:m[5]]) + "  "
		var items []string
		for _, n := range names {
			items = append(items, indent+`"`+n+`"`)
		}
		b := slices.Concat(cur[f][:m[3]], []byte(strings.Join(items, ",\n")+"\n"), cur[f][m[8]:])
		out[f] = b
	}

	// The SLO rule's rows of the metric tables, from the one rule text.
	for _, d := range []struct {
		file string
		rows [][2]string
	}{
		{"../docs/metrics.md", [][2]string{{"good request", GoodRequestRule}, {"goodput, token goodput", GoodputRule}, {"SLO attainment", AttainmentRule}}},
		{"../docs/replay.md", [][2]string{{"good request", GoodRequestRule}, {"goodput, token_goodput", GoodputRule}, {"slo_attainment, slo_attainment_ok", AttainmentRule}}},
	} {
		b := cur[d.file]
		for _, r := range d.rows {
			re := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(r[0]) + ` \| .*\|$`)
			if !re.Match(b) {
				t.Fatalf("%s: no %q row in the metric table", d.file, r[0])
			}
			b = re.ReplaceAllLiteral(b, []byte("| "+r[0]+" | "+r[1]+" |"))
		}
		out[d.file] = b
	}
	return out
}

// TestDefinitionsInSync keeps everything that lists the definitions
// derived from the one registry: the claims JSON Schema enum (the plan
// schema refers to it) and the SLO rule's rows of docs/metrics.md and
// docs/replay.md, rewritten with -update after adding a definition; and
// checks what schema accepts against the registry (the definitions, the
// versions a claims file may name, the claim paths per definitions).
func TestDefinitionsInSync(t *testing.T) {
	cur := map[string][]byte{}
	for _, f := range []string{"../schema/jsonschema/claims.schema.json", "../docs/metrics.md", "../docs/replay.md"} {
		b, err := os.ReadFile(f)
		if err != nil && !(*update && os.IsNotExist(err)) {
			t.Fatal(err)
		}
		cur[f] = b
	}
	derived := derivedFiles(t, cur)
	for f, want := range derived {
		if bytes.Equal(cur[f], want) {
			continue
		}
		if *update {
			if err := os.WriteFile(f, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s does not match the definitions registry or the SLO rule: run go test ./replay -run TestDefinitionsInSync -update", f)
	}
	// The registry's names are unique, lowercase, canonical first.
	seen := map[string]bool{}
	for i, d := range registry() {
		n := d.Name()
		if seen[n] || n != strings.ToLower(n) || (i == 0) != (d.peerRules() == nil) {
			t.Errorf("registry entry %d (%q): names must be unique and lowercase, and only the first (canonical) has no peer rules", i, n)
		}
		seen[n] = true
		if d.Summary() == "" || d.Help() == "" {
			t.Errorf("%s: no summary or help", n)
		}
	}
	if !slices.Equal(DefinitionNames(), slices.Collect(func(yield func(string) bool) {
		for _, d := range Definitions() {
			if !yield(d.Name()) {
				return
			}
		}
	})) {
		t.Error("DefinitionNames differs from the registry")
	}
	if !slices.Equal(DefinitionNames(), schema.ClaimDefinitions()) {
		t.Errorf("schema's claim definitions %q differ from the registry's %q", schema.ClaimDefinitions(), DefinitionNames())
	}
	// What schema accepts per definitions is what each computes: the
	// versions a claims file may name are the kept ones, every kept first
	// version of a peer has rules of its own, and a claim may name every
	// distribution the definitions add.
	for _, d := range registry() {
		var kept, unkept []string
		for i, v := range VersionsOf(d.Name()) {
			if !v.Kept {
				unkept = append(unkept, v.Name)
				continue
			}
			kept = append(kept, v.Name)
			if i == 0 && d.Tool() != nil && v.rules == (versionRules{}) {
				t.Errorf("%s: kept (schema.%s.KeepsFirst) but computed under the current rules", v.Name, d.Name())
			}
		}
		if k, u := schema.DefinitionsVersions(d.Name()); !slices.Equal(k, kept) || !slices.Equal(u, unkept) {
			t.Errorf("%s: schema's versions %q (unwritten %q) differ from replay's kept %q (not kept %q)", d.Name(), k, u, kept, unkept)
		}
		if err := schema.CheckClaimMetric(d.Name(), "ttft_ns.p99"); err != nil {
			t.Errorf("%s: schema rejects a canonical distribution: %v", d.Name(), err)
		}
		for _, x := range d.ExtraDists() {
			if err := schema.CheckClaimMetric(d.Name(), x+".p50"); err != nil {
				t.Errorf("%s: schema rejects its extra distribution %s: %v", d.Name(), x, err)
			}
		}
	}
}
