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
	Deps       []string
}

// listPackages returns every package of the module with its transitive deps.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+"/...").Output()
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

// forbidden maps a package prefix (inside the module) to imports it must
// never depend on, directly or not.
var forbidden = map[string][]string{
	"schema":    {module + "/artifact", module + "/verify", module + "/replay", module + "/importer", module + "/capture", "github.com/spf13/cobra"},
	"artifact":  {module + "/verify", module + "/replay", module + "/importer", module + "/capture", "github.com/spf13/cobra"},
	"verify":    {module + "/replay", module + "/importer", module + "/capture", "github.com/spf13/cobra"},
	"replay":    {module + "/verify", module + "/importer", module + "/capture", "github.com/spf13/cobra"},
	"importer":  {module + "/verify", module + "/capture", "github.com/spf13/cobra"},
	"capture":   {module + "/verify", module + "/importer", module + "/artifact", "github.com/spf13/cobra"},
	"simulator": {module + "/capture", "github.com/spf13/cobra"},
	"synth":     {module + "/replay", module + "/verify", "github.com/spf13/cobra"},
}

func TestImportsPointDownward(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		top, _, _ := strings.Cut(rel, "/")
		bad, ok := forbidden[top]
		if !ok {
			continue
		}
		for _, d := range p.Deps {
			for _, b := range bad {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s depends on %s, which it must not", p.ImportPath, d)
				}
			}
		}
	}
}
