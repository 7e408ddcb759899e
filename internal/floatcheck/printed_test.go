package floatcheck

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// TestNoFloatPrintedWithoutDigits: no non-test file outside
// internal/digits and report gives a float or a big.Rat to a fmt verb, to
// fmt.Sprint and its kin, or to a format that is a constant rather than a
// literal. It is the typed half of internal/archtest's
// TestFloatsSpelledByDigits, which reads format literals without types and
// so cannot see %v or %s applied to a float (the spelling of a user's
// value quoted back, digits.Shortest, was %v at some 70 sites). It lives
// here because this package already type-checks the whole module for
// TestNoFusableFloatExpressions; a second load in archtest would double
// the cost of make test. A slice, array or map of floats counts as a
// float (%v spells each element); a struct printed whole is not looked
// into, and a named float type with a String or Format method is let
// through: the verb calls that method, not strconv.
func TestNoFloatPrintedWithoutDigits(t *testing.T) {
	for _, p := range loadModule(t) {
		if p.PkgPath == modulePath+"/internal/digits" || p.PkgPath == modulePath+"/report" || strings.HasPrefix(p.PkgPath, modulePath+"/report/") {
			continue
		}
		for _, f := range printedFloats(p.Fset, p.Syntax, p.TypesInfo) {
			t.Errorf("%s: %s; spell it with a function of internal/digits", f.Pos, f.What)
		}
	}
}

// modulePath is this module's path.
const modulePath = "github.com/benchseal/benchseal"

// A printed is a number given to a formatting call.
type printed struct {
	Pos  token.Position
	What string
}

// printedFloats finds, in type-checked files, every float or big number
// given to a formatting call (printedArgs).
func printedFloats(fset *token.FileSet, files []*ast.File, info *types.Info) []printed {
	var out []printed
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, a := range printedArgs(call, info) {
				if what := spelledType(info.TypeOf(a)); what != "" {
					out = append(out, printed{Pos: fset.Position(a.Pos()), What: "a " + what + " given to " + types.ExprString(call.Fun)})
				}
			}
			return true
		})
	}
	return out
}

// printedArgs are the arguments call turns into text: all of fmt.Sprint's
// (and Print's, Fprint's, Append's, with or without ln), or those that
// follow a constant format string with a verb (%) in any other call, a
// scan excepted.
func printedArgs(call *ast.CallExpr, info *types.Info) []ast.Expr {
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "fmt" {
			name := strings.TrimSuffix(sel.Sel.Name, "ln")
			switch {
			case strings.Contains(strings.ToLower(name), "scan"):
				return nil
			case name == "Sprint" || name == "Print" || name == "Fprint" || name == "Append":
				return call.Args
			}
		}
	}
	if call.Ellipsis.IsValid() {
		return nil
	}
	for i, a := range call.Args {
		v := info.Types[a].Value
		if v != nil && v.Kind() == constant.String && strings.Contains(constant.StringVal(v), "%") {
			return call.Args[i+1:]
		}
	}
	return nil
}

// spelledType names t when a verb would spell it as a number: a float or
// complex type without a String or Format method, or big.Rat, big.Float
// (or a pointer to one), "" otherwise.
func spelledType(t types.Type) string {
	if t == nil {
		return ""
	}
	if p, ok := t.(*types.Pointer); ok {
		if n, ok := p.Elem().(*types.Named); ok && isBig(n) {
			return t.String()
		}
		return ""
	}
	if n, ok := t.(*types.Named); ok && isBig(n) {
		return t.String()
	}
	switch c := t.Underlying().(type) {
	case *types.Slice:
		return elemSpelled(t, c.Elem())
	case *types.Array:
		return elemSpelled(t, c.Elem())
	case *types.Map:
		return elemSpelled(t, c.Elem())
	}
	b, ok := t.Underlying().(*types.Basic)
	if !ok || b.Info()&(types.IsFloat|types.IsComplex) == 0 {
		return ""
	}
	if hasMethod(t) {
		return ""
	}
	return t.String()
}

// hasMethod reports whether t has a String or Format method, which a
// verb calls instead of spelling the value.
func hasMethod(t types.Type) bool {
	for _, m := range []string{"String", "Format"} {
		if obj, _, _ := types.LookupFieldOrMethod(t, true, nil, m); obj != nil {
			return true
		}
	}
	return false
}

// elemSpelled names container t when a verb would spell its elements
// as numbers (%v of a []float64 prints each with %g).
func elemSpelled(t, elem types.Type) string {
	if _, ok := elem.(*types.Pointer); ok || spelledType(elem) == "" || hasMethod(t) {
		return ""
	}
	return t.String()
}

func isBig(n *types.Named) bool {
	o := n.Obj()
	return o.Pkg() != nil && o.Pkg().Path() == "math/big" && (o.Name() == "Rat" || o.Name() == "Float")
}

// printedPlant holds every shape printedFloats must report (each line
// marked "want") and shapes it must leave alone.
const printedPlant = `package p

import (
	"fmt"
	"math/big"
	"time"
)

const note = "a %g fraction"

type watts float64

func (w watts) String() string { return "" }

func f(x float64, n int, r *big.Rat, d time.Duration, w watts, s string) {
	_ = fmt.Sprintf("alpha %v", x) // want
	_ = fmt.Errorf("%d: %s", n, x) // want
	_ = fmt.Sprintf(note, x) // want
	_ = fmt.Sprintf("a"+" %v", x) // want
	_ = fmt.Sprint("rate ", x) // want
	_ = fmt.Sprintf("%v", r) // want
	_ = fmt.Sprintf("%*d %v", n, n, x) // want
	_ = fmt.Sprintf("%v", []float64{x}) // want
	_ = fmt.Sprintf("%v", map[string]float64{}) // want
	_ = fmt.Sprintf("%v %v", []int{n}, []*big.Rat{r})
	_ = fmt.Sprintf("%d %v %s %v", n, d, s, w)
	_, _ = fmt.Sscanf(s, "%g", &x)
	_ = fmt.Sprint(n, s)
}
`

// TestPrintedFloatsFindsPlants: every planted float given to a verb is
// reported, at its argument; integers, durations, a named float with a
// String method and a scan are not.
func TestPrintedFloatsFindsPlants(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", printedPlant, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, x := range printedFloats(fset, []*ast.File{f}, info) {
		got[x.Pos.Line] = true
	}
	for i, line := range strings.Split(printedPlant, "\n") {
		if want := strings.HasSuffix(line, "// want"); want != got[i+1] {
			t.Errorf("line %d %q: reported %v, want %v", i+1, strings.TrimSpace(line), got[i+1], want)
		}
	}
}
