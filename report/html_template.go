package report

// htmlCSS is the style sheet every page shares, print rules included.
const htmlCSS = `:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--alt:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1240px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:22px;margin:0 0 14px}
h2{font-size:18px;margin:36px 0 12px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:22px 0 6px}
dl.meta{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:6px 18px;margin:0}
dl.meta dt{font-weight:600;color:var(--muted)}
dl.meta dd{margin:0;min-width:0}
dl.meta ul{margin:0;padding-left:18px}
.meanings{color:var(--muted);font-size:12.5px;margin:6px 0 0}
.meanings span{display:block}
dd.meanings{color:var(--fg);font-size:14px;margin:0}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(520px,100%),1fr));gap:20px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:12px 14px;min-width:0}
figcaption{font-weight:600}
svg{display:block;width:100%;height:auto}
svg text{font-size:12px;fill:var(--fg)}
.grid line{stroke:#eceff2}
.axis line{stroke:#8c959f}
.axis text.label{font-size:13px;fill:var(--muted)}
text.empty{fill:var(--muted);font-size:14px}
.s0{color:#0072b2}.s1{color:#d55e00}.s2{color:#009e73}.s3{color:#cc79a7}
.s4{color:#e69f00}.s5{color:#56b4e9}.s6{color:#5d3a9b}.s7{color:#6e7781}
.series path{fill:none;stroke:currentColor;stroke-width:2;stroke-linejoin:round}
.series.dash path{stroke-dasharray:7 4}
.series circle.med{fill:currentColor}
.series circle.rep{fill:#fff;stroke:currentColor;stroke-width:1.2}
.series text.null-rep{fill:currentColor;font-size:15px;font-weight:700}
rect.overloaded{fill:#d55e00;fill-opacity:.13}
rect.generator-limited{fill:#e69f00;fill-opacity:.13}
.vline line{stroke:var(--muted);stroke-dasharray:3 3}
.vline text{fill:var(--muted)}
.legend{list-style:none;padding:0;margin:4px 0 0;display:flex;flex-wrap:wrap;gap:2px 18px;font-size:12.5px}
.legend .sw{display:inline-block;width:24px;border-top:2.5px solid currentColor;vertical-align:middle;margin-right:6px}
.legend .dash .sw{border-top-style:dashed}
.legend .slo{color:var(--muted)}
.legend .slo .sw{border-top:1.5px dashed currentColor}
.legend .n{color:var(--fg)}
.caption{color:var(--muted);font-size:12.5px;margin:6px 0 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600;background:var(--alt)}
th.num{white-space:normal}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.unit{color:var(--muted)}
td.text{max-width:22em}
sup{color:var(--muted);margin-left:2px}
h1,h2,h3,dd,li,td.text,.answer,.caption,.meanings,summary{overflow-wrap:anywhere}
ol.footnotes{color:var(--muted);font-size:12.5px;padding-left:22px}
details.point{border:1px solid var(--line);border-radius:6px;padding:8px 14px 12px;margin:12px 0}
details.point summary{font-weight:600;font-size:15px;cursor:pointer}
.tables{display:flex;flex-wrap:wrap;gap:10px 36px;align-items:flex-start}
.tables p.meanings{width:0;min-width:100%}
.identity{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(380px,100%),1fr));gap:14px;margin:8px 0 4px}
.identity section{border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:0}
.identity h3{margin:0 0 8px}
.badge{display:inline-block;font-weight:700;font-size:12.5px;padding:1px 8px;border-radius:4px;border:1.5px solid #9a6700;color:#7d4e00;background:#fff8c5;margin-left:6px}
.badge.bad{border-color:#cf222e;color:#a40e26;background:#ffebe9}
.badge.good{border-color:#1a7f37;color:#116329;background:#dafbe1}
.answer{border:2px solid var(--fg);border-radius:6px;padding:10px 14px;margin:12px 0;font-size:15px}
td.st-differs,td.st-refused{color:#a40e26;font-weight:600}
td.st-unknown{color:#7d4e00;font-weight:600}
td.st-pass{color:#116329}
table.values{font-size:12px;margin-top:6px}
table.fields th[scope=row]{background:none;max-width:20em}
table.fields th,table.fields td{overflow-wrap:anywhere}
table.fields td.num{white-space:normal}
table.fields tr.objective th,table.fields tr.objective td{background:#fff8c5;font-weight:700}
@media print{
 body{font-size:11pt}
 main{max-width:none;padding:0}
 .charts{display:block}
 figure,details.point,.identity section,table{break-inside:avoid}
 figure{margin:0 0 10px}
 details.point{border:0;padding:0}
 .scroll{overflow:visible}
 table{font-size:8.5pt}
 table.values{font-size:8pt}
 th,td{padding:2px 4px}
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
`

// htmlSource is the page template. It loads nothing: the CSS is inline,
// the charts are inline SVG built by html_chart.go, and there is no
// script. html/template escapes every value for its context.
const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchseal replay report ({{.Definitions}})</title>
<style>
` + htmlCSS + `</style>
</head>
<body>
<main>
<h1>benchseal replay report</h1>
{{- with .Identity}}
{{template "identity" .}}
{{- end}}
{{template "references" .References}}
<dl class="meta">
<dt>definitions</dt><dd>{{.Definitions}}</dd>
<dt>boundary</dt><dd>{{.Boundary}}</dd>
{{- with .Incomplete}}
<dt>incomplete</dt><dd>{{.}}</dd>
{{- end}}
<dt>SLO</dt><dd>{{.SLO}}</dd>
{{- with .Cost}}
<dt>cost</dt><dd>{{.}}</dd>
{{- end}}
<dt>tpot, itl</dt><dd class="meanings">{{range .Meanings}}<span>{{.}}</span>{{end}}</dd>
{{- with .Notes}}
<dt>notes</dt><dd><ul>{{range .}}<li>{{.}}</li>{{end}}</ul></dd>
{{- end}}
<dt>schema</dt><dd>{{.Schema}}</dd>
</dl>
{{- with .Charts}}
<h2>Charts</h2>
<div class="charts">
{{- range .}}
{{template "chart" .}}
{{- end}}
</div>
{{- end}}
{{- if .Summary}}
<h2>Across repeats</h2>
<p class="caption">Median over the repeats of each point and its distribution-free 95 % confidence interval (golang.org/x/perf/benchmath); “-” is an unbounded side. Warnings are numbered notes below, as benchstat prints them.</p>
<div class="tables">
{{- range .Summary}}
<div>
<h3>point {{.Point}}</h3>
<div class="scroll"><table>
<thead><tr><th>metric</th><th class="num">median</th><th class="num">95 % CI</th><th class="num">n</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td>{{.Metric}}</td><td class="num">{{.Median}}{{range .Marks}}<sup>{{.}}</sup>{{end}}</td><td class="num">[{{.Low}}, {{.High}}]</td><td class="num">{{.N}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- if .Meanings}}
<p class="meanings">{{range $.Meanings}}<span>{{.}}</span>{{end}}</p>
{{- end}}
</div>
{{- end}}
</div>
{{- with .Footnotes}}
<ol class="footnotes">
{{- range .}}
<li>{{.}}</li>
{{- end}}
</ol>
{{- end}}
{{- end}}
{{- with .Capacity}}
<h3>capacity at attainment {{.Target}} %</h3>
<p>capacity (the highest offered rate up to which every rate's median attainment meets the target): {{if eq .Rate "-"}}null ({{.NullReason}}){{else}}{{.Rate}} req/s{{end}}; highest passing rate: {{.MaxPassing}} req/s</p>
{{- with .NonMonotone}}
<p><strong>{{.}}</strong></p>
{{- end}}
<div class="scroll"><table>
<thead><tr><th>point</th><th class="num">rate (req/s)</th><th class="num">attainment (% of declared)</th><th class="num">goodput (req/s)</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}{{if eq $i 0}}<td>{{$c}}</td>{{else}}<td class="num">{{$c}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- with .Points}}
<h2>Per load point and repeat</h2>
{{- range .}}
<details class="point" open>
<summary>point {{.Point}}, repeat {{.Repeat}}</summary>
<div class="tables">
<div>
<h3>requests</h3>
<table>
<tbody>
{{- range .Counts}}
<tr><td>{{.Key}}</td><td class="num">{{.Value}}</td></tr>
{{- end}}
</tbody>
</table>
<p class="meanings">sent = ok + error + timeout + cancelled + rejected; warmup is set aside; good requests meet the SLO.</p>
</div>
<div>
<h3>rates and SLO</h3>
<table>
<tbody>
{{- template "scalarrows" .Scalars}}
</tbody>
</table>
</div>
</div>
<h3>distributions</h3>
<div class="scroll"><table>
<thead><tr><th></th>{{range .DistKeys}}<th class="num">{{.}}</th>{{end}}<th>unit</th></tr></thead>
<tbody>
{{- template "distrows" .Dists}}
</tbody>
</table></div>
<p class="meanings">{{range $.Meanings}}<span>{{.}}</span>{{end}}</p>
{{- if .Cold}}
<h3>cold (warmup requests)</h3>
<table>
<tbody>
{{- template "scalarrows" .Cold}}
</tbody>
</table>
<div class="scroll"><table>
<thead><tr><th></th>{{range .DistKeys}}<th class="num">{{.}}</th>{{end}}<th>unit</th></tr></thead>
<tbody>
{{- template "distrows" .ColdDists}}
</tbody>
</table></div>
<p class="meanings"><span>{{$.ColdMeaning}}</span></p>
{{- end}}
{{- if .Sessions}}
<h3>sessions (multi-turn: time to first token by turn, session durations)</h3>
<table>
<tbody>
{{- template "scalarrows" .Sessions}}
</tbody>
</table>
<div class="scroll"><table>
<thead><tr><th></th>{{range .DistKeys}}<th class="num">{{.}}</th>{{end}}<th>unit</th></tr></thead>
<tbody>
{{- template "distrows" .SessionDists}}
</tbody>
</table></div>
{{- end}}
{{- if .Prefix}}
<h3>prefix cache (expected against reported cached tokens)</h3>
<table>
<tbody>
{{- template "scalarrows" .Prefix}}
</tbody>
</table>
{{- end}}
{{- if .Server}}
<h3>server (the engine's own /metrics)</h3>
<table>
<tbody>
{{- range .Server}}
<tr><td>{{.Metric}}</td><td class="text">{{.Value}}</td><td class="unit">{{.Unit}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- if .Energy}}
<h3>energy (the accelerator exporter's counters, over the point's window)</h3>
<table>
<tbody>
{{- range .Energy}}
<tr><td>{{.Metric}}</td><td class="text">{{.Value}}</td><td class="unit">{{.Unit}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
</details>
{{- end}}
{{- end}}
</main>
</body>
</html>
{{define "scalarrows"}}{{- range .}}
{{- if .Text}}
<tr><td>{{.Metric}}</td><td colspan="2" class="text">{{.Value}}</td></tr>
{{- else}}
<tr><td>{{.Metric}}</td><td class="num">{{.Value}}</td><td class="unit">{{.Unit}}</td></tr>
{{- end}}
{{- end}}{{end}}{{define "distrows"}}{{- range .}}
{{- if .Null}}
<tr><td>{{.Name}}</td><td colspan="{{.Span}}" class="text">{{.Null}}</td><td class="unit">{{.Unit}}</td></tr>
{{- else}}
<tr><td>{{.Name}}</td>{{range .Cells}}<td class="num">{{.}}</td>{{end}}<td class="unit">{{.Unit}}</td></tr>
{{- end}}
{{- end}}{{end}}{{define "chart"}}<figure>
<figcaption>{{.Title}}</figcaption>
<svg viewBox="{{.ViewBox}}" role="img" aria-label="{{.Title}}">
<g class="grid">
{{- range .YTicks}}<line x1="{{$.L}}" x2="{{$.R}}" y1="{{.Pos}}" y2="{{.Pos}}"/>{{end -}}
</g>
{{- range .Shades}}
<rect class="{{.Class}}" x="{{.X}}" y="{{$.T}}" width="{{.W}}" height="{{$.PlotH}}"><title>{{.Label}}</title></rect>
{{- end}}
<g class="axis">
<line x1="{{.L}}" x2="{{.L}}" y1="{{.T}}" y2="{{.B}}"/>
<line x1="{{.L}}" x2="{{.R}}" y1="{{.B}}" y2="{{.B}}"/>
{{- range .YTicks}}
<text x="{{$.L}}" y="{{.Pos}}" dx="-6" dy="0.32em" text-anchor="end">{{.Label}}</text>
{{- end}}
{{- range .XTicks}}
<line x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$.B}}" y2="{{$.TickEnd}}"/>
{{- if $.Rotate}}
<text transform="translate({{.Pos}} {{$.TickLabelY}}) rotate(-35)" text-anchor="end"><title>{{.Full}}</title>{{.Label}}</text>
{{- else}}
<text x="{{.Pos}}" y="{{$.TickLabelY}}" text-anchor="middle"><title>{{.Full}}</title>{{.Label}}</text>
{{- end}}
{{- end}}
<text class="label" transform="translate({{.YLabelX}} {{.YMid}}) rotate(-90)" text-anchor="middle">{{.YLabel}}</text>
<text class="label" x="{{.XMid}}" y="{{.XLabelY}}" text-anchor="middle">{{.XLabel}}</text>
</g>
{{- with .Empty}}
<text class="empty" x="{{$.XMid}}" y="{{$.EmptyY}}" text-anchor="middle">{{.}}</text>
{{- end}}
{{- with .VLine}}
<g class="vline"><line x1="{{.X}}" x2="{{.X}}" y1="{{$.T}}" y2="{{$.B}}"/><text x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="{{.Anchor}}">{{.Label}}</text></g>
{{- end}}
{{- range .HLines}}
<g class="vline"><line x1="{{$.L}}" x2="{{$.R}}" y1="{{.Y}}" y2="{{.Y}}"/><text x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="end">{{.Label}}</text></g>
{{- end}}
{{- range .Series}}
<g class="series {{.Class}}">
<path d="{{.Path}}"/>
{{- range .Reps}}
<circle class="rep" cx="{{.X}}" cy="{{.Y}}" r="2.6"><title>{{.Tip}}</title></circle>
{{- end}}
{{- range .Nulls}}
<text class="null-rep" x="{{.X}}" y="{{.Y}}" text-anchor="middle"><title>{{.Tip}}</title>×</text>
{{- end}}
{{- range .Dots}}
<circle class="med" cx="{{.X}}" cy="{{.Y}}" r="3.6"><title>{{.Tip}}</title></circle>
{{- end}}
</g>
{{- end}}
</svg>
<ul class="legend">
{{- range .Legend}}
<li class="{{.Class}}"><span class="sw"></span><span class="n">{{.Name}}</span></li>
{{- end}}
{{- with .VLine}}
<li class="slo"><span class="sw"></span><span class="n">{{.Label}}</span></li>
{{- end}}
{{- range .HLines}}
<li class="slo"><span class="sw"></span><span class="n">{{.Label}}</span></li>
{{- end}}
</ul>
{{- with .Table.Rows}}
<div class="scroll"><table class="values">
<thead><tr>{{range $i, $h := $.Table.Head}}<th{{if and $i (not (index $.Table.Text $i))}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{- range .}}
<tr>{{range $i, $c := .}}{{if not $i}}<td>{{$c}}</td>{{else if index $.Table.Text $i}}<td class="text">{{$c}}</td>{{else}}<td class="num">{{$c}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- with .Caption}}
<p class="caption">{{.}}</p>
{{- end}}
</figure>
{{- end -}}
`
