package report

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/benchseal/benchseal/replay"
)

// Chart geometry, in SVG user units (the viewBox is chartW × chartH). The
// plot area is [plotL, plotR] × [plotT, plotB].
const (
	chartW = 640
	chartH = 340
	plotL  = 72
	plotR  = 620
	plotT  = 20
	plotB  = 260
	// maxTickRunes caps a categorical tick label; the full name stays in
	// the tick's tooltip.
	maxTickRunes = 14
	// seriesClasses is the number of distinct series colours in the CSS.
	seriesClasses = 8
)

// plot is a line chart in data units: x is a point index (categorical) or
// a limit in ms, y a value already in display units. A nil y is a gap.
type plot struct {
	title, yLabel, xLabel, caption string
	// empty is shown instead of the data when no value is defined.
	empty   string
	x0, x1  *big.Rat
	xTicks  []xTick
	series  []plotSeries
	vline   *big.Rat
	vlineAt string
	// hlines are horizontal reference lines (SLO limits, targets).
	hlines []refLine
	// categorical says x is a point index: the data table then has one
	// column per tick.
	categorical bool
	// shades mark load points (categorical x) the replay flagged.
	shades []shade
}

// shade marks the slot of a flagged load point: class overloaded or
// generator-limited, label saying which flags in how many repeats.
type shade struct {
	x                  *big.Rat
	class, label, line string
}

// refLine is a horizontal reference line at y (display units).
type refLine struct {
	y     *big.Rat
	label string
}

type xTick struct {
	x           *big.Rat
	label, full string
}

type plotSeries struct {
	name, class string
	// line holds the medians (joined by the line), reps every repeat.
	line, reps []plotPt
}

type plotPt struct {
	x, y *big.Rat
	tip  string
	// null marks a repeat whose value is null (y nil): it is drawn as a
	// cross on the x axis, never left out silently.
	null bool
	// xl and val are the point's x and y as printed in the chart's data
	// table (line points; val also for a null repeat).
	xl, val string
}

// chartView is a plot laid out in SVG coordinates, every number already
// formatted; html.tmpl renders it.
type chartView struct {
	Title, Caption, YLabel, XLabel, Empty string
	ViewBox                               string
	L, R, T, B, YMid, XMid, YLabelX       string
	XLabelY, TickLabelY, TickEnd, EmptyY  string
	YTicks                                []tickView
	XTicks                                []tickView
	Rotate                                bool
	Series                                []seriesView
	Legend                                []legendView
	VLine                                 *vlineView
	HLines                                []hlineView
	// Shades are the flagged points' slots; PlotH is the plot's height.
	Shades []shadeView
	PlotH  string
	// Table holds the plotted values, readable without hovering.
	Table dataTable
}

// dataTable is the table of values printed under a chart.
type dataTable struct {
	Head []string
	Rows [][]string
	// Text marks the columns of words (flags, null reasons), which wrap;
	// the others hold numbers, which do not.
	Text []bool
}

type hlineView struct{ Y, LabelX, LabelY, Label string }

type shadeView struct{ X, W, Class, Label string }

type legendView struct{ Class, Name string }

type tickView struct{ Pos, Label, Full string }

type seriesView struct {
	Class, Name, Path string
	Dots, Reps        []dotView
	// Nulls are the repeats whose value is null, as crosses on the axis.
	Nulls []dotView
}

type dotView struct{ X, Y, Tip string }

type vlineView struct{ X, LabelX, LabelY, Anchor, Label string }

// px formats an SVG coordinate (exact, one decimal, half to even).
func px(r *big.Rat) string { return Decimal(replay.Exact(r), one, 1) }

func rat(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

// ratOf is v as an exact rational for positioning (floats exactly as
// stored, square roots via their nearest float64).
func ratOf(v replay.Value) *big.Rat {
	if v.IsNull() {
		return nil
	}
	if r := v.Rat(); r != nil {
		return r
	}
	f, _ := v.Float64()
	return new(big.Rat).SetFloat64(f)
}

// scaled is v·s as a rational, nil when v is undefined.
func scaled(v replay.Value, s *big.Rat) *big.Rat {
	r := ratOf(v)
	if r == nil {
		return nil
	}
	return new(big.Rat).Mul(r, s)
}

// lerp maps v from [d0, d1] onto [r0, r1].
func lerp(v, d0, d1 *big.Rat, r0, r1 int64) *big.Rat {
	t := new(big.Rat).Sub(v, d0)
	t.Mul(t, rat(r1-r0))
	t.Quo(t, new(big.Rat).Sub(d1, d0))
	return t.Add(t, rat(r0))
}

func ceilRat(r *big.Rat) *big.Int {
	n := new(big.Int).Neg(r.Num())
	return n.Neg(n.Div(n, r.Denom()))
}

func pow10(k int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(k, -k))), nil)
	if k < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

// niceStep returns the smallest step of 1, 2 or 5 × 10^k that divides
// span (> 0) into at most n (≥ 2) intervals, and the digits its labels
// need.
func niceStep(span *big.Rat, n int) (*big.Rat, int) {
	k := 0
	e := big.NewRat(1, 1)
	ten := big.NewRat(10, 1)
	for new(big.Rat).Mul(e, ten).Cmp(span) <= 0 {
		e.Mul(e, ten)
		k++
	}
	for e.Cmp(span) > 0 {
		e.Quo(e, ten)
		k--
	}
	// 10^k ≤ span < 10^(k+1): 5·10^k gives at most 2 intervals.
	for j := k - 1; ; j++ {
		for _, m := range []int64{1, 2, 5} {
			s := new(big.Rat).Mul(pow10(j), rat(m))
			if ceilRat(new(big.Rat).Quo(span, s)).Cmp(big.NewInt(int64(n))) <= 0 {
				return s, max(0, -j)
			}
		}
	}
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// layout turns p into SVG coordinates: y from 0 to a rounded-up maximum,
// x over [x0, x1].
func (p *plot) layout() chartView {
	cv := p.frame()
	hlines, ymax := p.yRange(&cv)
	step, places := niceStep(ymax, 5)
	sc := chartScale{p: p, zero: new(big.Rat), top: new(big.Rat).Mul(new(big.Rat).SetInt(ceilRat(new(big.Rat).Quo(ymax, step))), step)}
	for v := new(big.Rat); v.Cmp(sc.top) <= 0; v = new(big.Rat).Add(v, step) {
		cv.YTicks = append(cv.YTicks, tickView{Pos: sc.yAt(v), Label: Decimal(replay.Exact(v), one, places)})
	}
	p.xAxis(&cv, sc)
	if cv.Empty != "" {
		return cv
	}
	cv.Table = p.table()
	cv.PlotH = px(rat(plotB - plotT))
	for _, sh := range p.shades {
		half := big.NewRat(1, 2)
		lo := lerp(new(big.Rat).Sub(sh.x, half), p.x0, p.x1, plotL, plotR)
		hi := lerp(new(big.Rat).Add(sh.x, half), p.x0, p.x1, plotL, plotR)
		cv.Shades = append(cv.Shades, shadeView{X: px(lo), W: px(hi.Sub(hi, lo)), Class: sh.class, Label: sh.label})
	}
	for _, h := range hlines {
		cv.HLines = append(cv.HLines, hlineView{Y: sc.yAt(h.y), LabelX: px(rat(plotR - 4)),
			LabelY: px(new(big.Rat).Sub(lerp(h.y, sc.zero, sc.top, plotB, plotT), rat(4))), Label: h.label})
	}
	for _, s := range p.series {
		cv.Series = append(cv.Series, sc.series(s))
	}
	if nullRepeats(p.series) {
		cv.Caption = strings.TrimSpace(cv.Caption + " " + nullRepeatsCaption)
	}
	cv.VLine = p.vlineMark()
	return cv
}

// chartScale maps data onto the plot area: y over [zero, top], x over the
// plot's [x0, x1]. layout's phases share it.
type chartScale struct {
	p         *plot
	zero, top *big.Rat
}

// yAt is v's SVG y coordinate.
func (sc chartScale) yAt(v *big.Rat) string { return px(lerp(v, sc.zero, sc.top, plotB, plotT)) }

// xAt is v's SVG x coordinate.
func (sc chartScale) xAt(v *big.Rat) string { return px(lerp(v, sc.p.x0, sc.p.x1, plotL, plotR)) }

// frame is layout's first phase: the chart's texts and the fixed
// coordinates of its plot area, axes and labels.
func (p *plot) frame() chartView {
	return chartView{
		Title: p.title, Caption: p.caption, YLabel: p.yLabel, XLabel: p.xLabel,
		ViewBox: "0 0 " + Number(replay.Int(chartW)) + " " + Number(replay.Int(chartH)),
		L:       px(rat(plotL)), R: px(rat(plotR)), T: px(rat(plotT)), B: px(rat(plotB)),
		YMid: px(big.NewRat(plotT+plotB, 2)), XMid: px(big.NewRat(plotL+plotR, 2)),
		YLabelX: px(rat(18)), XLabelY: px(rat(chartH - 8)), TickLabelY: px(rat(plotB + 18)), TickEnd: px(rat(plotB + 5)),
		EmptyY: px(big.NewRat(plotT+plotB, 2)),
	}
}

// yRange is layout's second phase: the largest y to show (the data's and
// the drawn reference lines', 1 when there is none above 0) and the
// reference lines drawn. Without data cv says the chart is empty; a
// reference line far above the data would flatten it, so such a line is
// named in cv's caption instead of drawn.
func (p *plot) yRange(cv *chartView) ([]refLine, *big.Rat) {
	var ymax *big.Rat
	for _, s := range p.series {
		for _, pt := range append(append([]plotPt(nil), s.line...), s.reps...) {
			if pt.y != nil && (ymax == nil || pt.y.Cmp(ymax) > 0) {
				ymax = pt.y
			}
		}
	}
	if ymax == nil {
		cv.Empty = p.empty
	}
	var hlines []refLine
	for _, h := range p.hlines {
		if ymax != nil && h.y.Cmp(new(big.Rat).Mul(ymax, rat(3))) > 0 {
			cv.Caption = strings.TrimSpace(cv.Caption + " " + h.label + " lies above the plotted range (beyond 3× the largest value).")
			continue
		}
		hlines = append(hlines, h)
	}
	for _, h := range hlines {
		if ymax == nil || h.y.Cmp(ymax) > 0 {
			ymax = h.y
		}
	}
	if ymax == nil || ymax.Sign() <= 0 {
		ymax = big.NewRat(1, 1)
	}
	return hlines, ymax
}

// xAxis lays out the x ticks (rotated when a label is too wide for its
// slot, upright ones leaving room below the axis) and the legend.
func (p *plot) xAxis(cv *chartView, sc chartScale) {
	slot := 0
	if len(p.xTicks) > 0 {
		slot = (plotR - plotL) / len(p.xTicks)
	}
	for _, t := range p.xTicks {
		label := truncate(t.label, maxTickRunes)
		// about 7 units a character at the tick font size
		if 7*utf8.RuneCountInString(label) > slot-6 {
			cv.Rotate = true
		}
		cv.XTicks = append(cv.XTicks, tickView{Pos: sc.xAt(t.x), Label: label, Full: t.full})
	}
	for _, s := range p.series {
		cv.Legend = append(cv.Legend, legendView{Class: s.class, Name: s.name})
	}
	// Upright tick labels leave room below the axis.
	if !cv.Rotate {
		h := rat(plotB + 50)
		cv.ViewBox = "0 0 " + Number(replay.Int(chartW)) + " " + Number(replay.Exact(h))
		cv.XLabelY = px(h.Sub(h, rat(10)))
	}
}

// series lays out one series: its line as an SVG path broken at null
// values with a dot a point, its repeats' dots, and a cross on the x axis
// for each null repeat.
func (sc chartScale) series(s plotSeries) seriesView {
	sv := seriesView{Class: s.class, Name: s.name}
	var path strings.Builder
	pen := false
	for _, pt := range s.line {
		if pt.y == nil {
			pen = false
			continue
		}
		x, y := sc.xAt(pt.x), sc.yAt(pt.y)
		if pen {
			path.WriteString(" L")
		} else {
			if path.Len() > 0 {
				path.WriteByte(' ')
			}
			path.WriteString("M")
		}
		path.WriteString(x + " " + y)
		pen = true
		sv.Dots = append(sv.Dots, dotView{X: x, Y: y, Tip: pt.tip})
	}
	sv.Path = path.String()
	for _, pt := range s.reps {
		switch {
		case pt.y != nil:
			sv.Reps = append(sv.Reps, dotView{X: sc.xAt(pt.x), Y: sc.yAt(pt.y), Tip: pt.tip})
		case pt.null:
			sv.Nulls = append(sv.Nulls, dotView{X: sc.xAt(pt.x), Y: px(rat(plotB + 4)), Tip: pt.tip})
		}
	}
	return sv
}

// vlineMark lays out the vertical marker, nil when there is none or it
// lies outside [x0, x1]; its label sits on the side with more room.
func (p *plot) vlineMark() *vlineView {
	if p.vline == nil || p.vline.Cmp(p.x0) < 0 || p.vline.Cmp(p.x1) > 0 {
		return nil
	}
	x := lerp(p.vline, p.x0, p.x1, plotL, plotR)
	vl := &vlineView{X: px(x), LabelY: px(rat(plotT + 12)), Anchor: "start", Label: p.vlineAt}
	if x.Cmp(big.NewRat(plotL+plotR, 2)) > 0 {
		vl.LabelX, vl.Anchor = px(x.Sub(x, rat(4))), "end"
	} else {
		vl.LabelX = px(x.Add(x, rat(4)))
	}
	return vl
}

// nullRepeatsCaption explains the crosses of null repeats.
const nullRepeatsCaption = "A cross on the x axis marks a repeat whose value is null (why: in its tooltip and the table); the median of that point is then null too."

// nullRepeats reports whether any series has a null repeat.
func nullRepeats(series []plotSeries) bool {
	for _, s := range series {
		for _, pt := range s.reps {
			if pt.null {
				return true
			}
		}
	}
	return false
}

// table lays out the plotted line values. A categorical x gives one row
// per load point (so a long sweep grows down the page, never sideways
// past its chart): the point, one column per series, a column of its null
// repeats for a series that has any, and the point's flags when any point
// is flagged. A numeric x gives one row per point (series, x, y).
func (p *plot) table() dataTable {
	var t dataTable
	if !p.categorical {
		t.Head = []string{"series", p.xLabel, p.yLabel}
		t.Text = []bool{false, false, false}
		for _, s := range p.series {
			for _, pt := range s.line {
				if pt.y != nil && pt.val != "" {
					t.Rows = append(t.Rows, []string{s.name, pt.xl, pt.val})
				}
			}
		}
		return t
	}
	t.Head, t.Text = []string{p.xLabel}, []bool{false}
	unit := unitOf(p.yLabel)
	cols := make([]map[string]string, 0, 2*len(p.series)+1)
	for _, s := range p.series {
		vals, nulls := map[string]string{}, map[string]string{}
		for _, pt := range s.line {
			if pt.val != "" {
				vals[pt.x.RatString()] = pt.val
			}
		}
		for _, pt := range s.reps {
			if pt.null {
				k := pt.x.RatString()
				nulls[k] = strings.TrimPrefix(nulls[k]+"; "+pt.val, "; ")
			}
		}
		t.Head, t.Text, cols = append(t.Head, strings.TrimSpace(s.name+" "+unit)), append(t.Text, false), append(cols, vals)
		if len(nulls) > 0 {
			t.Head, t.Text, cols = append(t.Head, s.name+": null repeats"), append(t.Text, true), append(cols, nulls)
		}
	}
	if len(p.shades) > 0 {
		flags := map[string]string{}
		for _, sh := range p.shades {
			flags[sh.x.RatString()] = sh.line
		}
		t.Head, t.Text, cols = append(t.Head, "flags"), append(t.Text, true), append(cols, flags)
	}
	for _, tk := range p.xTicks {
		row := []string{tk.full}
		for _, c := range cols {
			v, ok := c[tk.x.RatString()]
			if !ok {
				v = "-"
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// unitOf is the parenthesised unit ending an axis label ("(ms)" of
// "TTFT (ms)"), "" when there is none.
func unitOf(label string) string {
	if i := strings.LastIndex(label, " ("); i >= 0 && strings.HasSuffix(label, ")") {
		return label[i+1:]
	}
	return ""
}

// numericX sets an x axis over [lo, hi] with round ticks in unit.
func (p *plot) numericX(lo, hi *big.Rat, unit string) {
	p.x0, p.x1 = lo, hi
	if lo.Cmp(hi) == 0 {
		p.x0, p.x1 = new(big.Rat), new(big.Rat).Mul(hi, rat(2))
		if hi.Sign() == 0 {
			p.x1 = big.NewRat(1, 1)
		}
	}
	step, places := niceStep(new(big.Rat).Sub(p.x1, p.x0), 6)
	for v := new(big.Rat).Mul(new(big.Rat).SetInt(ceilRat(new(big.Rat).Quo(p.x0, step))), step); v.Cmp(p.x1) <= 0; v = new(big.Rat).Add(v, step) {
		l := Decimal(replay.Exact(v), one, places)
		full := l
		if unit != "" {
			full += " " + unit
		}
		p.xTicks = append(p.xTicks, xTick{x: v, label: l, full: full})
	}
}

// seriesClass is the CSS class of the i-th series of a chart.
func seriesClass(i int, dashed bool) string {
	c := "s" + Number(replay.Int(int64(i%seriesClasses)))
	if dashed || (i/seriesClasses)%2 == 1 {
		c += " dash"
	}
	return c
}

// sloLimitLine is the horizontal line of an SLO limit on a latency chart.
func sloLimitLine(metric string, ns int64) refLine {
	return refLine{y: new(big.Rat).Mul(rat(ns), nsToMS), label: "SLO " + metric + " ≤ " + Decimal(replay.Int(ns), nsToMS, 3) + " ms"}
}
