package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// digitsOwners are the directories (relative to the module root) that
// may turn a float or a rational into digits themselves: internal/digits,
// the one place of the spelling rules, and report, which renders tables
// with them (report/number.go).
var digitsOwners = []string{"internal/digits/", "report/"}

// TestFloatsSpelledByDigits: no non-test file outside internal/digits and
// report spells a non-integer number itself, so every number a user reads
// in a reason, note, answer, warning, error or JSON text field is spelled
// by one of digits' functions (Shortest, Sig, Places, Decimal, Sci,
// RatAway and the named rules) or by report, and a change of rule is made
// in one place. A call is reported when it is strconv.FormatFloat or
// AppendFloat, a FloatString or RatString method (big.Rat's), big.Float's
// Text with a format byte, or when one of its string literal arguments
// holds a float verb (%f, %.3g, %8.2e, ...; %% is no verb), unless it is a
// scanning call (fmt.Sscanf), which reads a number rather than spells one.
//
// What this syntactic check cannot see, the typed one does:
// internal/floatcheck's TestNoFloatPrintedWithoutDigits finds a float
// given to %v or %s, to fmt.Sprint, or to a format that is a constant or
// a concatenation rather than a literal, on the module's type-checked load
// it already makes for TestNoFusableFloatExpressions (a second load here
// would double the cost of make test). Neither sees a float turned into
// text by encoding/json (a JSON number, not a spelling) or by a method a
// named type defines.
func TestFloatsSpelledByDigits(t *testing.T) {
	n := 0
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		rel = filepath.ToSlash(rel)
		for _, d := range digitsOwners {
			if strings.HasPrefix(rel, d) {
				return
			}
		}
		n++
		for _, s := range floatSpellings(fset, f) {
			t.Errorf("%s:%d:%d: %s; spell the number with a function of internal/digits", rel, s.pos.Line, s.pos.Column, s.why)
		}
	})
	if n < 100 {
		t.Fatalf("checked %d files, want the module's", n)
	}
}

type spelling struct {
	pos token.Position
	why string
}

// floatSpellings lists the calls of f that spell a float or a rational
// themselves (spellsFloat), scanning calls excepted.
func floatSpellings(fset *token.FileSet, f *ast.File) []spelling {
	var out []spelling
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || isScan(call) {
			return true
		}
		if why := spellsFloat(call); why != "" {
			out = append(out, spelling{fset.Position(call.Pos()), why})
		}
		return true
	})
	return out
}

// spellsFloat says how call turns a float or a rational into digits, ""
// when it does not: strconv's float formatters, big.Rat's FloatString and
// RatString, big.Float's Text, or a format literal with a float verb.
func spellsFloat(call *ast.CallExpr) string {
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		switch name := sel.Sel.Name; {
		case name == "FloatString" || name == "RatString":
			return "big.Rat." + name
		case name == "Text" && len(call.Args) == 2 && isCharLit(call.Args[0]):
			return "big.Float.Text"
		}
	}
	if why := floatFormatting(call); strings.HasPrefix(why, "strconv.") {
		return why
	}
	for i, a := range call.Args {
		lit, ok := a.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || !isFormatArg(call, i) {
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

// isFormatArg reports whether the i-th argument of call is in a format's
// place: the callee's name ends in f (fmt.Sprintf, errcond.Errorf, t.Logf)
// or more arguments follow it (a wrapper such as schema's ps.add(field,
// format, args...)), and the callee is not of strings, bytes or regexp,
// whose string arguments are text, not formats.
func isFormatArg(call *ast.CallExpr, i int) bool {
	name := ""
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		name = fn.Name
	case *ast.SelectorExpr:
		name = fn.Sel.Name
		if id, ok := fn.X.(*ast.Ident); ok && (id.Name == "strings" || id.Name == "bytes" || id.Name == "regexp") {
			return false
		}
	}
	return strings.HasSuffix(name, "f") || i+1 < len(call.Args)
}

func isCharLit(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.CHAR
}

// isScan reports whether call is one of fmt's scanning functions, whose
// verbs read a number.
func isScan(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "fmt" && strings.Contains(strings.ToLower(sel.Sel.Name), "scan")
}

// TestFloatSpellingsFindsPlants: the scanner reports a float verb, the
// strconv formatters and big's, and leaves integer verbs, an escaped
// percent, a width on a string and a scan alone.
func TestFloatSpellingsFindsPlants(t *testing.T) {
	src := `package p

func f(x float64, n int, r *big.Rat, b *big.Float) {
	_ = fmt.Sprintf("%.2f", x) // want
	_ = fmt.Errorf("rate %g: %w", x, err) // want
	_ = errcond.Errorf(ErrX, "x %8.3e", x) // want
	ps.add("field", "at most %G", x) // want
	_ = strconv.FormatFloat(x, 'f', -1, 64) // want
	_ = strconv.AppendFloat(nil, x, 'g', -1, 64) // want
	_ = r.FloatString(3) // want
	_ = r.RatString() // want
	_ = b.Text('g', 10) // want
	_ = fmt.Sprintf("%d of %d (%s %%)", n, n, digits.Places(x, 0))
	_ = fmt.Sprintf("100%% error, %-22s", digits.Sig(x, 17))
	_, _ = fmt.Sscanf(s, "a %g fraction", &x)
	_, _ = fmt.Scanf("%g", &x)
	_ = strconv.FormatInt(int64(n), 10)
	_ = strings.Join(parts, "%e")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, s := range floatSpellings(fset, f) {
		got[s.pos.Line] = true
	}
	for i, line := range strings.Split(src, "\n") {
		want := strings.HasSuffix(line, "// want")
		if want != got[i+1] {
			t.Errorf("line %d %q: reported %v, want %v", i+1, strings.TrimSpace(line), got[i+1], want)
		}
	}
}
