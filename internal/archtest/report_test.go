package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reportPkg is the presentation package: the only place benchseal turns
// metric values and other numbers into digits (report/doc.go).
const reportPkg = module + "/report"

// TestOnlyCmdDependsOnReport: report sits above every library package,
// so none but report itself and the commands under cmd/ may depend on it,
// directly or not. The forbidden map names the packages that exist; this
// holds for any package added later. (External tests, as replay's
// server_test.go, may render with report: they are not part of the
// import graph.)
func TestOnlyCmdDependsOnReport(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		top, _, _ := strings.Cut(rel, "/")
		if top == "report" || top == "cmd" {
			continue
		}
		for _, d := range p.Deps {
			if d == reportPkg || strings.HasPrefix(d, reportPkg+"/") {
				t.Errorf("%s depends on %s; only cmd/ may", p.ImportPath, d)
			}
		}
	}
}

// floatVerb matches a fmt verb that turns a float into digits: %f, %.3f,
// %8.2f, %g, %e and their upper-case forms.
var floatVerb = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(\.(\d+|\*)?)?[fFeEgG]`)

// cliFloatExceptions are the functions of the commands that may still
// format a float themselves, each with its reason (file: function). None
// is left: a point's name ("rate-2.5") and the --claims-tolerance usage
// error spell their numbers with internal/digits, as the libraries do.
var cliFloatExceptions = map[string]string{}

// TestCLIFormatsNoFloats: the commands parse flags, call a library and
// print what report rendered; they give no float to a fmt verb or to
// strconv.FormatFloat, so every number they print is rounded and spelled
// as report does it (report/number.go). Every string literal argument of
// a call is checked, so a wrapper of fmt (usagef) is checked too.
func TestCLIFormatsNoFloats(t *testing.T) {
	dir := filepath.Join("..", "..", "cmd", "benchseal")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join(dir, "internal", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(more) == 0 {
		t.Fatalf("no files under %s", dir)
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			key := filepath.ToSlash(rel) + ": " + fd.Name.Name
			ast.Inspect(fd, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				why := floatFormatting(call)
				if why == "" {
					return true
				}
				if _, ok := cliFloatExceptions[key]; ok {
					used[key] = true
					return true
				}
				t.Errorf("%s (%s): %s; render the number in package report", fset.Position(call.Pos()), fd.Name.Name, why)
				return true
			})
		}
	}
	for k := range cliFloatExceptions {
		if !used[k] {
			t.Errorf("cliFloatExceptions names %s, which formats no float: remove it", k)
		}
	}
}

// floatFormatting says how call turns a float into digits, "" when it
// does not: strconv's float formatters, or a string literal argument
// with a float verb.
func floatFormatting(call *ast.CallExpr) string {
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "strconv" && (sel.Sel.Name == "FormatFloat" || sel.Sel.Name == "AppendFloat") {
			return "strconv." + sel.Sel.Name
		}
	}
	for _, a := range call.Args {
		lit, ok := a.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			continue
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			continue
		}
		if v := floatVerb.FindString(strings.ReplaceAll(s, "%%", "")); v != "" {
			return "format " + strconv.Quote(v)
		}
	}
	return ""
}
