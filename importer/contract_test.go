package importer

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

const module = "github.com/benchseal/benchseal/"

// TestEveryPeerToolIsComplete walks the registration (schema.PeerTools)
// and fails for a tool that lacks any part of it: its importer and its
// replay definitions, both pointing to the same registration; its real
// fixture; its importer package's tests and fuzz target and, for a tool
// with records, the package's call of the peer-tool contract (peertest.Run,
// which fails when the tool's Case lacks its failed-first input, canonical
// outcomes or provenance statuses).
func TestEveryPeerToolIsComplete(t *testing.T) {
	if len(importers) != len(schema.PeerTools) {
		t.Errorf("%d importers for %d peer tools", len(importers), len(schema.PeerTools))
	}
	for _, pt := range schema.PeerTools {
		t.Run(pt.Name, func(t *testing.T) {
			im, ok := Lookup(pt.Name)
			if !ok || im.Peer != pt {
				t.Errorf("no importer registered with schema's %s (importer.importers)", pt.Name)
			} else {
				checkPackageTests(t, im, pt.Records)
			}
			if d, err := replay.LookupDefinition(pt.Name); err != nil || d.Tool() != pt {
				t.Errorf("no replay definitions pointing to schema's %s (replay's registry, def_TOOL.go): %v", pt.Name, err)
			}
			checkFixture(t, pt)
		})
	}
	for _, d := range replay.Definitions() {
		if pt := d.Tool(); pt != nil {
			if got, ok := schema.LookupPeerTool(pt.Name); !ok || got != pt {
				t.Errorf("definitions %s point to a tool not in schema.PeerTools", d.Name())
			}
		} else if d.Name() != "benchseal" {
			t.Errorf("definitions %s point to no peer tool", d.Name())
		}
	}
}

// checkFixture: the tool's registration names the files of one real
// import, each under testdata/fixtures/TOOL, and says where they came
// from.
func checkFixture(t *testing.T, pt *schema.PeerTool) {
	t.Helper()
	if len(pt.Fixture) == 0 {
		t.Errorf("schema.%s names no fixture files", pt.Name)
	}
	for _, n := range pt.Fixture {
		if st, err := os.Stat(filepath.Join(importtest.FixtureDir(pt.Name), n)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("fixture %s: %v", n, err)
		}
	}
	if pt.FixtureSource == "" {
		t.Errorf("schema.%s says nowhere where its fixture came from (FixtureSource)", pt.Name)
	}
}

// checkPackageTests: the importer's own package (found from its parser
// function, not from a name) has a test and a fuzz target of its parser
// and, when records, a test calling peertest.Run.
func checkPackageTests(t *testing.T, im Importer, records bool) {
	t.Helper()
	fn := runtime.FuncForPC(reflect.ValueOf(im.parser).Pointer()).Name()
	pkg := fn[:strings.LastIndex(fn, ".")]
	if !strings.HasPrefix(pkg, module+"importer/") {
		t.Fatalf("%s's parser %s is not in an importer package", im.Tool, fn)
	}
	dir := filepath.Join(importtest.Root(), filepath.FromSlash(strings.TrimPrefix(pkg, module)))
	tests, fuzz, contract := testFuncs(t, dir)
	if records && !contract {
		t.Errorf("%s's tests do not call peertest.Run (the peer-tool contract: failed-first input, canonical outcomes, provenance)", pkg)
	}
	if len(tests) == 0 {
		t.Errorf("%s has no Test function", pkg)
	}
	if len(fuzz) == 0 {
		t.Errorf("%s has no Fuzz target (every parser of untrusted input has one)", pkg)
	}
}

// testFuncs returns the names of the Test and Fuzz functions in dir's
// _test.go files, and whether any of them calls peertest.Run.
func testFuncs(t *testing.T, dir string) (tests, fuzz []string, contract bool) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		contract = contract || callsContract(f)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Type.Params.NumFields() != 1 {
				continue
			}
			switch {
			case strings.HasPrefix(fd.Name.Name, "Test") && isTestingParam(fd, "T"):
				tests = append(tests, fd.Name.Name)
			case strings.HasPrefix(fd.Name.Name, "Fuzz") && isTestingParam(fd, "F"):
				fuzz = append(fuzz, fd.Name.Name)
			}
		}
	}
	return tests, fuzz, contract
}

// callsContract reports whether f calls peertest.Run, peertest being
// internal/peertest.
func callsContract(f *ast.File) bool {
	name := ""
	for _, im := range f.Imports {
		if im.Path.Value == `"`+module+`internal/peertest"` {
			name = "peertest"
			if im.Name != nil {
				name = im.Name.Name
			}
		}
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && name != "" {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" {
				x, ok := sel.X.(*ast.Ident)
				found = found || ok && x.Name == name
			}
		}
		return !found
	})
	return found
}

// isTestingParam reports whether fd's one parameter is *testing.<typ>.
func isTestingParam(fd *ast.FuncDecl, typ string) bool {
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "testing" && sel.Sel.Name == typ
}

// registryGen is the file TestRegistryInSync writes.
const registryGen = "registry_gen.go"

// TestRegistryInSync: registry_gen.go lists exactly the importer packages
// (directories under importer/) that declare a Registration variable;
// -update rewrites it.
func TestRegistryInSync(t *testing.T) {
	want := registryFile(t, registeredPackages(t))
	cur, err := os.ReadFile(registryGen)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	if bytes.Equal(cur, want) {
		return
	}
	if *update {
		if err := os.WriteFile(registryGen, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s does not list the importer packages that declare a Registration: run go test ./importer -run TestRegistryInSync -update", registryGen)
}

// registeredPackages returns, sorted, the directories under importer/
// whose non-test files declare a package-level variable Registration.
func registeredPackages(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" || e.Name() == "internal" {
			continue
		}
		names, _ := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if declaresVar(f, "Registration") {
				out = append(out, e.Name())
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// declaresVar reports whether f declares a package-level variable name.
func declaresVar(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if n.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// registryFile renders registry_gen.go for the packages pkgs.
func registryFile(t *testing.T, pkgs []string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("// Code generated by go test ./importer -run TestRegistryInSync -update; DO NOT EDIT.\n\npackage importer\n\nimport (\n")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "\t%q\n", module+"importer/"+p)
	}
	fmt.Fprintf(&b, "\t%q\n)\n\n// registrations are the Registration of every importer package.\nvar registrations = []ingest.Registration{\n", module+"importer/ingest")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "\t%s.Registration,\n", p)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}
