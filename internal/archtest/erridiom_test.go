package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestOneErrorIdiom: a sentinel (ErrX, pkg.ErrX) gives an error its
// condition through errcond.Errorf(ErrX, "<the whole message>", ...), never
// by being wrapped with %w, which puts the sentinel's words into the text
// (fmt.Errorf("%w: ...", ErrX)). One idiom, so a message reads the same
// whatever its condition's words, and the condition can be renamed or
// reworded without changing what is printed (internal/errcond/doc.go).
func TestOneErrorIdiom(t *testing.T) {
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, w := range sentinelWraps(fset, f) {
			t.Errorf("%s (%s): %%w wraps the sentinel %s: write errcond.Errorf(%[3]s, \"<the message, its words included>\", ...)", w.pos, rel, w.arg)
		}
	})
}

// TestSentinelWrapsFindsAWrappedSentinel: the scanner finds a sentinel,
// local or another package's, under %w anywhere in the format (errcond's
// own calls included) and accepts errcond's condition argument, a %w of
// an error variable and a %v or %s of a sentinel.
func TestSentinelWrapsFindsAWrappedSentinel(t *testing.T) {
	src := `package p

func f(err error) {
	_ = fmt.Errorf("%w: a", ErrBad)
	_ = fmt.Errorf("b %s: %w", name, plan.ErrPlan)
	_ = errcond.Errorf(ErrBad, "c: %w", err)
	_ = errcond.Errorf(ErrKeyNotOpened, "%w: d", ErrKey)
	_ = fmt.Errorf("e: %w", err)
	_ = fmt.Errorf("f: %v", ErrBad)
	_ = fmt.Errorf("g %s: %w", ErrorName, wrappedErr)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range sentinelWraps(fset, f) {
		got = append(got, fmt.Sprintf("%s %s", w.pos, w.arg))
	}
	want := []string{"p.go:4 ErrBad", "p.go:5 plan.ErrPlan", "p.go:7 ErrKey"}
	if !slices.Equal(got, want) {
		t.Errorf("sentinelWraps = %q, want %q", got, want)
	}
}

// sentinelWraps returns f's Errorf-shaped calls that give a sentinel to a
// %w verb.
func sentinelWraps(fset *token.FileSet, f *ast.File) []chainCut {
	var out []chainCut
	errorfVerbs(f, func(call *ast.CallExpr, verbs []verbArg) {
		for _, v := range verbs {
			if v.verb == 'w' && isSentinel(v.arg) {
				out = append(out, chainCut{position(fset, call), exprString(v.arg)})
			}
		}
	})
	return out
}

// isSentinel reports whether e names a sentinel by Go's naming: an
// identifier, or a package's, starting with Err and a capital (ErrPlan,
// io.ErrNoProgress).
func isSentinel(e ast.Expr) bool {
	var name string
	switch x := e.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		if _, ok := x.X.(*ast.Ident); !ok {
			return false
		}
		name = x.Sel.Name
	default:
		return false
	}
	rest, ok := strings.CutPrefix(name, "Err")
	return ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}
