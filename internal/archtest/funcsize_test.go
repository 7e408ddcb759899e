package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The limits every non-test function keeps: a longer or more branched
// function is split by phase (its steps named as functions) or its rules
// become a table. go-containerregistry's pkg/v1 has 3 functions over 100
// lines and none over complexity 30.
const (
	maxFuncLines      = 100
	maxFuncComplexity = 30
)

// permanentFuncExceptions are functions over the limits on purpose, each
// with its reason. They may not grow past the size they were measured at.
var permanentFuncExceptions = map[string]funcException{
	// The hand-written record decoder (schema/recordjson.go) reads every
	// record of a run, the hot path of validate, pack, verify and replay:
	// value is one switch over the record's fields (each case a field's
	// strict parse), its number parser and its skipper of orig's values are
	// byte-level state machines, one branch per JSON grammar case, each in
	// one loop so a record decodes in one pass without allocation; split,
	// they would add a call per field or byte. FuzzDecodeRecord checks the
	// decoder against encoding/json.
	"schema.(*recordDecoder).value":    {lines: 103, complexity: 40},
	"schema.(*recordDecoder).intValue": {lines: 57, complexity: 33},
	"schema.(*recordDecoder).skip":     {lines: 96, complexity: 33},
}

// funcExceptions are today's offenders, measured when the limit was set:
// each may shrink, none may grow, and an entry that fits the limits fails
// the test until it is removed, so the list only shrinks.
var funcExceptions = map[string]funcException{}

type funcException struct{ lines, complexity int }

// funcMeasure is one function's size.
type funcMeasure struct {
	name              string
	pos               string
	lines, complexity int
}

// TestFunctionSizeLimits fails on any non-test function over
// maxFuncLines lines or cyclomatic complexity maxFuncComplexity that is
// not an exception, on an exception that grew, and on an exception that
// no longer exceeds a limit (remove it).
func TestFunctionSizeLimits(t *testing.T) {
	ms := measureFuncs(t)
	seen := map[string]bool{}
	var over []string
	for _, m := range ms {
		if m.lines <= maxFuncLines && m.complexity <= maxFuncComplexity {
			continue
		}
		seen[m.name] = true
		ex, ok := permanentFuncExceptions[m.name]
		if !ok {
			ex, ok = funcExceptions[m.name]
		}
		switch {
		case !ok:
			over = append(over, fmt.Sprintf("%s (%s): %d lines, complexity %d", m.name, m.pos, m.lines, m.complexity))
		case m.lines > max(ex.lines, maxFuncLines) || m.complexity > max(ex.complexity, maxFuncComplexity):
			t.Errorf("%s (%s) grew to %d lines, complexity %d (excepted at %d lines, complexity %d): split it by phase",
				m.name, m.pos, m.lines, m.complexity, ex.lines, ex.complexity)
		}
	}
	if len(over) > 0 {
		t.Errorf("%d function(s) over %d lines or cyclomatic complexity %d: split each by phase (or make its rules a table):\n\t%s",
			len(over), maxFuncLines, maxFuncComplexity, strings.Join(over, "\n\t"))
	}
	for _, list := range []map[string]funcException{permanentFuncExceptions, funcExceptions} {
		for name := range list {
			if !seen[name] {
				t.Errorf("%s is listed as an exception but is within the limits (or gone): remove it from the list", name)
			}
		}
	}
}

// TestFunctionMeasure checks the measurement on known shapes.
func TestFunctionMeasure(t *testing.T) {
	src := `package p

func simple() {}

func branches(a, b bool, xs []int) int {
	if a && b {
		return 1
	} else if a || b {
		return 2
	}
	for _, x := range xs {
		switch x {
		case 1, 2:
		case 3:
		default:
		}
	}
	f := func() {
		for {
			break
		}
	}
	f()
	select {
	case <-make(chan int):
	default:
	}
	return 0
}

type T struct{}

func (*T) m() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, m := range measureFile(fset, f, "p") {
		got[m.name] = [2]int{m.lines, m.complexity}
	}
	// branches: 1 + if + && + else-if + || + range + 2 cases + for + 1 comm case = 10.
	want := map[string][2]int{"p.simple": {1, 1}, "p.branches": {25, 10}, "p.(*T).m": {1, 1}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: lines, complexity %v, want %v", k, got[k], w)
		}
	}
}

func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return dir
}

// measureFuncs measures every function of the module's non-test Go files,
// named "pkgdir.Func" or "pkgdir.(Recv).Method" with pkgdir the package's
// directory relative to the module root.
func measureFuncs(t *testing.T) []funcMeasure {
	var out []funcMeasure
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		out = append(out, measureFile(fset, f, filepath.ToSlash(filepath.Dir(rel)))...)
	})
	slices.SortFunc(out, func(a, b funcMeasure) int { return strings.Compare(a.name, b.name) })
	return out
}

func measureFile(fset *token.FileSet, f *ast.File, pkg string) []funcMeasure {
	var out []funcMeasure
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, funcMeasure{
			name:       pkg + "." + funcName(fd),
			pos:        fmt.Sprintf("%s:%d", filepath.Base(start.Filename), start.Line),
			lines:      end.Line - start.Line + 1,
			complexity: complexity(fd.Body),
		})
	}
	return out
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	var recv string
	switch x := fd.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		recv = "(*" + typeName(x.X) + ")"
	default:
		recv = "(" + typeName(x) + ")"
	}
	return recv + "." + fd.Name.Name
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return typeName(x.X)
	case *ast.IndexListExpr:
		return typeName(x.X)
	}
	return "?"
}

// complexity is the cyclomatic complexity gocyclo computes: 1, plus one
// per if, for, range, non-default case and comm clause, && and ||,
// function literals included in their enclosing function.
func complexity(body *ast.BlockStmt) int {
	c := 1
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
