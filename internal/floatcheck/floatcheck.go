// Package floatcheck finds float expressions the Go compiler may fuse into
// one fused multiply-add instruction, which rounds once where the source
// rounds twice, so the last digit of a number differs between machines
// (arm64, ppc64le, s390x and riscv64 fuse; amd64 does not). The Go
// specification allows the fusion "possibly across statements" and says
// an explicit floating-point type conversion rounds to the precision of
// the target type, preventing it: float64(x*y) + z is never fused.
//
// Find reports, in type-checked files, every float product x*y (or a
// quotient by a constant power of two, which the compiler turns into a
// product) that is an operand of a float addition or subtraction: x*y + z,
// z - x*y, -x*y + z, s += x*y, and a local variable assigned a bare
// product (h := x*y, v = v*v*v) that a later addition or subtraction in
// the same function reads. It is a syntactic, conservative check, fast
// enough for make test; make arm64-check's objdump scan of the arm64
// binary is the exact one.
package floatcheck

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"sort"
)

// A Finding is one fusable expression.
type Finding struct {
	Pos  token.Position
	Expr string // the product, as written
	How  string // the addition it feeds
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s %s (make the product explicit: float64(%s))", f.Pos, f.Expr, f.How, f.Expr)
}

// Find returns the fusable expressions of files, whose types info holds
// (Types and Defs/Uses filled), sorted by position.
func Find(fset *token.FileSet, files []*ast.File, info *types.Info) []Finding {
	c := &checker{fset: fset, info: info}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				c.function(fd.Body)
			}
		}
		// Function literals at package level (var x = func() ...).
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok {
				ast.Inspect(gd, func(n ast.Node) bool {
					if fl, ok := n.(*ast.FuncLit); ok {
						c.function(fl.Body)
						return false
					}
					return true
				})
			}
		}
	}
	sort.Slice(c.out, func(i, j int) bool {
		a, b := c.out[i].Pos, c.out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return c.out
}

type checker struct {
	fset *token.FileSet
	info *types.Info
	out  []Finding
	seen map[token.Pos]bool
}

func (c *checker) report(prod ast.Expr, how string) {
	if c.seen == nil {
		c.seen = map[token.Pos]bool{}
	}
	if c.seen[prod.Pos()] {
		return
	}
	c.seen[prod.Pos()] = true
	c.out = append(c.out, Finding{Pos: c.fset.Position(prod.Pos()), Expr: types.ExprString(prod), How: how})
}

// function checks one function body (with the function literals inside
// it: a closure's variables are the enclosing function's).
func (c *checker) function(body *ast.BlockStmt) {
	// products holds the local variables assigned a bare product, with
	// the product (the first one found), for the cross-statement rule.
	products := map[types.Object]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		switch as.Tok {
		case token.ADD_ASSIGN, token.SUB_ASSIGN:
			if p := c.product(as.Rhs[0]); p != nil {
				c.report(p, "is added to "+types.ExprString(as.Lhs[0])+" ("+as.Tok.String()+")")
			}
		case token.ASSIGN, token.DEFINE:
			if len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, l := range as.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				if p := c.product(as.Rhs[i]); p != nil {
					if o := c.object(id); o != nil {
						if _, dup := products[o]; !dup {
							products[o] = p
						}
					}
				}
			}
		}
		return true
	})
	ast.Inspect(body, func(n ast.Node) bool {
		switch e := n.(type) {
		case *ast.BinaryExpr:
			if (e.Op != token.ADD && e.Op != token.SUB) || !c.isFloat(e) {
				return true
			}
			for _, x := range []ast.Expr{e.X, e.Y} {
				if p := c.product(x); p != nil {
					c.report(p, "is an operand of "+e.Op.String())
				} else if id, ok := ast.Unparen(x).(*ast.Ident); ok {
					if p, ok := products[c.object(id)]; ok {
						c.report(p, "is assigned to "+id.Name+", an operand of "+e.Op.String()+" at "+c.fset.Position(e.OpPos).String())
					}
				}
			}
		case *ast.AssignStmt:
			if e.Tok == token.ADD_ASSIGN || e.Tok == token.SUB_ASSIGN {
				for _, x := range []ast.Expr{e.Lhs[0], e.Rhs[0]} {
					if id, ok := ast.Unparen(x).(*ast.Ident); ok && c.isFloat(x) {
						if p, ok := products[c.object(id)]; ok {
							c.report(p, "is assigned to "+id.Name+", an operand of "+e.Tok.String()+" at "+c.fset.Position(e.TokPos).String())
						}
					}
				}
			}
		}
		return true
	})
}

func (c *checker) object(id *ast.Ident) types.Object {
	if o := c.info.Defs[id]; o != nil {
		return o
	}
	return c.info.Uses[id]
}

// product returns the float product e is (through parentheses and a
// unary minus), or nil: x*y, or x/c with c a constant power of two, not
// itself a constant.
func (c *checker) product(e ast.Expr) ast.Expr {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		e = ast.Unparen(u.X)
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok || !c.isFloat(b) || c.isConst(b) {
		return nil
	}
	switch b.Op {
	case token.MUL:
		// The compiler rewrites x*2 as x+x, x*1 as x and x*-1 as -x:
		// no product is left to fuse.
		for _, o := range []ast.Expr{b.X, b.Y} {
			if tv, ok := c.info.Types[o]; ok && tv.Value != nil {
				if f, ok := constant.Float64Val(constant.ToFloat(tv.Value)); ok && (f == 2 || f == 1 || f == -1) {
					return nil
				}
			}
		}
		return b
	case token.QUO:
		if tv, ok := c.info.Types[b.Y]; ok && tv.Value != nil {
			if f, ok := constant.Float64Val(constant.ToFloat(tv.Value)); ok && f != 0 {
				if m, _ := math.Frexp(math.Abs(f)); m == 0.5 {
					return b
				}
			}
		}
	}
	return nil
}

func (c *checker) isConst(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	return ok && tv.Value != nil
}

func (c *checker) isFloat(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	if !ok || tv.Type == nil {
		return false
	}
	b, ok := tv.Type.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsFloat != 0
}
