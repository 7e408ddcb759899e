package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unreviewedChainCuts are the package directories whose Errorf calls
// still format an error with %v without saying why; the list only
// shrinks. In each, some cuts are the point (an inner condition must not
// reach the exit-code mapping, e.g. compare/load under ErrRejected) and
// need their comment, others should become %w.
var unreviewedChainCuts = []string{
	"artifact", "artifact/registry", "attest", "capture", "collect", "compare/load",
	"internal/pagecheck", "internal/release", "plan", "reproduce", "verify",
}

// TestErrorChainsAreKept: outside the listed packages, an Errorf-shaped
// call (fmt.Errorf, errcond.Errorf, ingest.RecordErrorf, ...) formats an
// error value (a variable named err or ending in Err) with %w, or a
// comment on its line or the line above says why %v cuts the chain
// (naming "%v").
func TestErrorChainsAreKept(t *testing.T) {
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		if slices.Contains(unreviewedChainCuts, filepath.ToSlash(filepath.Dir(rel))) {
			return
		}
		for _, c := range chainCuts(fset, f) {
			t.Errorf("%s: %%v cuts the error chain of %s without a comment saying why (use %%w)", c.pos, c.arg)
		}
	})
}

// eachNonTestFile calls fn with every non-test Go file of the module
// (testdata and vendor skipped), parsed with its comments, and its path
// relative to the module root.
func eachNonTestFile(t *testing.T, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(rel, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChainCutsFindsAnUncommentedV: the scanner finds a %v of err and
// accepts a %w, a %v of a non-error and a %v whose comment says why.
func TestChainCutsFindsAnUncommentedV(t *testing.T) {
	src := `package p

func f(err, x error, n int) {
	_ = fmt.Errorf("a %d: %v", n, err)
	_ = fmt.Errorf("b: %w", err)
	_ = fmt.Errorf("c %v", n)
	// %v: the cause must not reach
	// the exit code.
	_ = fmt.Errorf("d: %v", err)
	_ = ingest.RecordErrorf(file, 0, 1, "f", "%v", b.readErr)
	_ = fmt.Errorf("e %%v %s", err)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chainCuts(fset, f) {
		got = append(got, fmt.Sprintf("%s %s", c.pos, c.arg))
	}
	want := []string{"p.go:4 err", "p.go:10 b.readErr"}
	if !slices.Equal(got, want) {
		t.Errorf("chainCuts = %q, want %q", got, want)
	}
}

// chainCut is one %v of an error value.
type chainCut struct{ pos, arg string }

// chainCuts returns f's Errorf-shaped calls that format an error value
// with %v and have no comment group naming "%v" ending on their line or
// the one above.
func chainCuts(fset *token.FileSet, f *ast.File) []chainCut {
	commented := map[int]bool{}
	for _, cg := range f.Comments {
		// A comment group naming %v counts for the line it ends on.
		if strings.Contains(cg.Text(), "%v") {
			commented[fset.Position(cg.End()).Line] = true
		}
	}
	var out []chainCut
	errorfVerbs(f, func(call *ast.CallExpr, verbs []verbArg) {
		line := fset.Position(call.Pos()).Line
		for _, v := range verbs {
			if v.verb == 'v' && isErrorValue(v.arg) && !commented[line] && !commented[line-1] {
				out = append(out, chainCut{position(fset, call), exprString(v.arg)})
			}
		}
	})
	return out
}

// errorfVerbs calls fn with each Errorf-shaped call of f (a selector
// call whose name ends in Errorf) and the verbs of its format paired with
// their arguments. The format is the call's first string literal with a
// verb (a RecordErrorf's field name comes before it).
func errorfVerbs(f *ast.File, fn func(call *ast.CallExpr, verbs []verbArg)) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !strings.HasSuffix(sel.Sel.Name, "Errorf") {
			return true
		}
		for i, a := range call.Args {
			lit, ok := a.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			format, err := strconv.Unquote(lit.Value)
			if err != nil || !strings.Contains(format, "%") {
				continue
			}
			fn(call, verbArgs(format, call.Args[i+1:]))
			break
		}
		return true
	})
}

// position is where call is, as file:line.
func position(fset *token.FileSet, call *ast.CallExpr) string {
	p := fset.Position(call.Pos())
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

type verbArg struct {
	verb byte
	arg  ast.Expr
}

// verbArgs pairs each verb of format with its argument (explicit argument
// indexes are not used in this module).
func verbArgs(format string, args []ast.Expr) []verbArg {
	var out []verbArg
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.*", format[i]) >= 0 {
			i++
		}
		if i >= len(format) || format[i] == '%' {
			continue
		}
		if n < len(args) {
			out = append(out, verbArg{format[i], args[n]})
		}
		n++
	}
	return out
}

// isErrorValue reports whether e names an error by this module's naming:
// err, or an identifier or field ending in Err.
func isErrorValue(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "err" || strings.HasSuffix(x.Name, "Err")
	case *ast.SelectorExpr:
		return strings.HasSuffix(x.Sel.Name, "Err")
	}
	return false
}

func exprString(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		return exprString(s.X) + "." + s.Sel.Name
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "expression"
}
