package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/benchseal/benchseal"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages returns every package of the module with its transitive deps.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// forbidden maps a top-level package (inside the module) to module packages
// it must never depend on, directly or not.
var forbidden = map[string][]string{
	"schema":        {module + "/"},
	"artifact":      {module + "/verify", module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"plan":          {module + "/artifact", module + "/attest", module + "/verify", module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"attest":        {module + "/verify", module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"verify":        {module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"replay":        {module + "/verify", module + "/artifact", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"importer":      {module + "/verify", module + "/artifact", module + "/capture", module + "/simulator", module + "/report"},
	"capture":       {module + "/verify", module + "/artifact", module + "/replay", module + "/importer", module + "/report"},
	"simulator":     {module + "/"},
	"stats":         {module + "/"},
	"servermetrics": {module + "/"}, // but stats, a leaf below it
	"energy":        {module + "/"}, // but schema, servermetrics (its scrape reader) and stats below it
	"compare":       {module + "/importer", module + "/capture", module + "/simulator", module + "/synth", module + "/report"},
	"redact":        {module + "/"},
	"k8s":           {module + "/artifact", module + "/attest", module + "/collect", module + "/compare", module + "/capture", module + "/importer", module + "/merge", module + "/plan", module + "/replay", module + "/simulator", module + "/stats", module + "/synth", module + "/verify"},
	"collect":       {module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/synth", module + "/compare", module + "/report"},
	"merge":         {module + "/verify", module + "/artifact", module + "/replay", module + "/importer", module + "/capture", module + "/simulator", module + "/report"},
	"reproduce":     {module + "/importer", module + "/simulator", module + "/synth", module + "/k8s", module + "/collect", module + "/merge", module + "/cmd", module + "/report"},
	"synth":         {module + "/replay", module + "/verify", module + "/artifact", module + "/importer", module + "/capture", module + "/report"},
}

// errcond gives errors their condition; every package may use it, and it
// imports nothing of the module (TestErrcondIsALeaf).
const errcond = module + "/internal/errcond"

// cliOnly are imports only cmd/ may make directly: library packages never
// parse flags. (Third-party code may use them internally.)
var cliOnly = []string{"github.com/spf13/cobra", "github.com/spf13/pflag"}

// digits holds the digit rules every package shares (the leaves too);
// it imports nothing of the module (TestErrcondIsALeaf).
const digits = module + "/internal/digits"

// TestErrcondIsALeaf: the error-condition helper every package may import,
// and the digit rules replay, compare and report share, depend on no
// package of the module.
func TestErrcondIsALeaf(t *testing.T) {
	for _, leaf := range []string{errcond, digits} {
		found := false
		for _, p := range listPackages(t) {
			if p.ImportPath != leaf {
				continue
			}
			found = true
			for _, d := range p.Deps {
				if strings.HasPrefix(d, module+"/") {
					t.Errorf("%s depends on %s", leaf, d)
				}
			}
		}
		if !found {
			t.Fatalf("%s not found", leaf)
		}
	}
}

func TestImportsPointDownward(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		top, _, _ := strings.Cut(rel, "/")
		if top != "cmd" {
			for _, d := range p.Imports {
				for _, b := range cliOnly {
					if d == b {
						t.Errorf("%s imports %s; only cmd/ may", p.ImportPath, d)
					}
				}
			}
		}
		bad, ok := forbidden[top]
		if !ok {
			continue
		}
		for _, d := range p.Deps {
			for _, b := range bad {
				prefix := strings.TrimSuffix(b, "/")
				if d == prefix || strings.HasPrefix(d, prefix+"/") {
					if top == "schema" || top == "simulator" || top == "stats" || top == "redact" || top == "servermetrics" || top == "energy" {
						// leaves: only themselves, errcond and digits
						// (which import nothing of the module): a leaf's
						// messages spell their numbers as every package
						// does
						if d == module+"/"+top || strings.HasPrefix(d, module+"/"+top+"/") || d == errcond || d == digits {
							continue
						}
						if top == "servermetrics" && d == module+"/stats" {
							continue // the one least-squares fit
						}
						if top == "energy" && (d == module+"/servermetrics" || d == module+"/stats" || d == module+"/schema") {
							continue // the one Prometheus text reader
						}
					}
					t.Errorf("%s depends on %s, which it must not", p.ImportPath, d)
				}
			}
		}
	}
}
