package floatcheck

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// planted holds every shape Find must report (each line marked "want")
// and shapes it must leave alone (integer arithmetic, constants, an
// explicit float64 conversion, x*2).
const planted = `package p

func f(x, y, z float64, i, j, k int64, s []float64) float64 {
	a := x*y + z // want
	b := z - x*y // want
	c := -x*y + z // want
	d := (x * y) - z // want
	e := x/4 + z // want
	z += x * y // want
	h := x * y // want
	g := h - z
	v := x
	v = v * v * v // want
	w := 1 - v
	ok1 := float64(x*y) + z
	ok2 := x/3 + z
	ok3 := x*2 + z
	ok4 := i*j + k
	ok5 := float64(i*j + k)
	const q = 1.5 * 2.0
	ok6 := q + z
	ok7 := x * y
	return a + b + c + d + e + g + w + ok1 + ok2 + ok3 + ok5 + ok6 + ok7*ok7 + float64(ok4) // want
}
`

// TestFindCatchesPlantedCases: every fusable shape is reported at its
// product, nothing else is.
func TestFindCatchesPlantedCases(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", planted, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, x := range Find(fset, []*ast.File{f}, info) {
		got[x.Pos.Line] = true
	}
	for i, line := range strings.Split(planted, "\n") {
		if want := strings.HasSuffix(line, "// want"); want != got[i+1] {
			t.Errorf("line %d %q: reported %v, want %v", i+1, strings.TrimSpace(line), got[i+1], want)
		}
	}
}

// TestNoFusableFloatExpressions: no float expression in benchseal's code
// (every package of the module, tests excepted) can be fused into a
// multiply-add, which would change the last digit of a printed number
// between amd64 and arm64. make arm64-check's objdump scan is the exact
// check; this one runs in make test.
func TestNoFusableFloatExpressions(t *testing.T) {
	pkgs := loadModule(t)
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		for _, f := range Find(p.Fset, p.Syntax, p.TypesInfo) {
			t.Errorf("%v", f)
		}
	}
}

// moduleLoad is the module's packages, type-checked once for every test
// of this package that reads them: the load takes most of their time.
var moduleLoad struct {
	once sync.Once
	pkgs []*packages.Package
	err  error
}

// loadModule returns every package of the module (tests excepted),
// parsed and type-checked.
func loadModule(t *testing.T) []*packages.Package {
	t.Helper()
	moduleLoad.once.Do(func() {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: "../.."}
		moduleLoad.pkgs, moduleLoad.err = packages.Load(cfg, "./...")
	})
	if moduleLoad.err != nil {
		t.Fatal(moduleLoad.err)
	}
	if len(moduleLoad.pkgs) < 20 {
		t.Fatalf("loaded %d packages, want the module's", len(moduleLoad.pkgs))
	}
	return moduleLoad.pkgs
}
