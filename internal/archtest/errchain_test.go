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

// TestErrorChainsAreKept: an Errorf-shaped call (fmt.Errorf,
// errcond.Errorf, ingest.RecordErrorf, ...) outside tests formats an
// error value (a variable named err or ending in Err) with %w, or a
// comment ending on its line or the line above says why %v cuts the
// chain, in a line starting "%v:" (e.g. a decoder's DecodeError that is
// also schema.ErrInvalid must not make a bad payload read as an invalid
// run). Of the 33 uncommented cuts before every package was reviewed,
// 27 became %w and 6 say why.
func TestErrorChainsAreKept(t *testing.T) {
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, c := range chainCuts(fset, f) {
			t.Errorf("%s (%s): %%v cuts the error chain of %s without a \"// %%v: <why>\" comment (or use %%w)", c.pos, rel, c.arg)
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
	// formats err with %v
	_ = fmt.Errorf("g: %v", err)
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
	want := []string{"p.go:4 err", "p.go:11 err", "p.go:12 b.readErr"}
	if !slices.Equal(got, want) {
		t.Errorf("chainCuts = %q, want %q", got, want)
	}
}

// chainCut is one %v of an error value.
type chainCut struct{ pos, arg string }

// chainCuts returns f's Errorf-shaped calls that format an error value
// with %v and have no comment group with a line starting "%v:" ending on
// their line or the one above.
func chainCuts(fset *token.FileSet, f *ast.File) []chainCut {
	commented := map[int]bool{}
	for _, cg := range f.Comments {
		// A comment group with a line starting "%v:" counts for the
		// line it ends on.
		for line := range strings.SplitSeq(cg.Text(), "\n") {
			if strings.HasPrefix(line, "%v:") {
				commented[fset.Position(cg.End()).Line] = true
			}
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
