package report

// identitySource renders the run identity cards and external references
// of compare, decide and replay pages.
const identitySource = `{{define "identity"}}<div class="identity">
{{- range .}}
<section>
<h3>{{.Label}} <code>{{.Name}}</code>{{if .Synthetic}}<span class="badge bad">SYNTHETIC</span>{{end}}</h3>
<dl class="meta">
{{- range .Fields}}
<dt>{{.Key}}</dt><dd>{{.Value}}</dd>
{{- end}}
</dl>
</section>
{{- end}}
</div>{{end}}
{{define "references"}}{{with .}}<h2>External evidence (linked references, not compared)</h2>
<div class="identity">
{{- range .}}
<section>
<h3><code>{{.Name}}</code><span class="badge">EXTERNAL REFERENCE</span></h3>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
{{- with .Results}}
<details open><summary>` + referenceResultsCaption + `</summary>
<table><tbody>{{range .}}<tr><td>{{.Key}}</td><td class="num">{{.Value}}</td></tr>{{end}}</tbody></table>
</details>
{{- end}}
</section>
{{- end}}
</div>{{end}}{{end}}
{{define "table"}}<div class="scroll"><table>
<thead><tr>{{range $i, $h := .Head}}<th{{if index $.Num $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if index $.Num $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>{{end}}
{{define "fields"}}<div class="scroll"><table class="fields">
<thead><tr><th></th>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range $r := .Rows}}
<tr{{if $r.Objective}} class="objective"{{end}}><th scope="row">{{$r.Name}}</th>{{range $r.Cells}}<td{{if $r.Num}} class="num"{{end}}>{{.}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>{{end}}
{{define "guard"}}<div class="scroll"><table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}{{if eq $i 1}}<td class="{{statusClass $c}}">{{$c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table></div>{{end}}
{{define "charts"}}{{with .}}<h2>Charts</h2>
<div class="charts">
{{- range .}}
{{template "chart" .}}
{{- end}}
</div>{{end}}{{end}}`

// compareSource is the compare page.
const compareSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchseal compare</title>
<style>` + htmlCSS + `</style>
</head>
<body>
<main>
<h1>benchseal compare</h1>
<h2>Configurations</h2>
{{template "identity" .Inputs}}
{{template "references" .References}}
<h2>Comparability guard: {{.Verdict}}{{if eq .Verdict "refused"}}<span class="badge bad">REFUSED</span>{{end}}</h2>
{{template "guard" .Guard}}
{{- range .Refusals}}
<p class="answer">Refused: {{.}}</p>
{{- end}}
{{template "charts" .Charts}}
{{- with .Tables}}
<h2>Comparisons</h2>
{{- range .}}
<h3>{{.Title}}</h3>
{{template "table" .}}
{{- end}}
{{- end}}
{{- with .Footnotes}}
<ol class="footnotes">{{range .}}<li>{{.}}</li>{{end}}</ol>
{{- end}}
{{- if .Tables}}
<p class="meanings">{{range .Meanings}}<span>{{.}}</span>{{end}}</p>
{{- end}}
{{- with .Summary}}
<p class="caption">{{.}}</p>
{{- end}}
{{- with .Unmatched.Rows}}
<h2>Unmatched load points</h2>
{{template "table" $.Unmatched}}
{{- end}}
{{- with .Notes}}
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
</main>
</body>
</html>
`

// decideSource is the decide page.
const decideSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchseal decide: {{.Objective}}</title>
<style>` + htmlCSS + `</style>
</head>
<body>
<main>
<h1>benchseal decide: {{.Objective}}</h1>
<dl class="meta">
<dt>SLO</dt><dd>{{.SLO}}</dd>
<dt>attainment target</dt><dd>{{.Target}}</dd>
</dl>
<div class="answer"><strong>{{if .Winner}}Winner: {{.Winner}}{{else}}No significant winner{{end}}.</strong> {{.Answer}}
{{- with .Margin}}<br>{{.}}{{end}}</div>
{{- with .Limits}}
<h3>Limits of this answer</h3>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- with .Decision.Rows}}
<h2>Decision table</h2>
{{template "fields" $.Decision}}
{{- with $.Footnotes}}
<ol class="footnotes">{{range .}}<li>{{.}}</li>{{end}}</ol>
{{- end}}
{{- end}}
{{template "charts" .Charts}}
<h2>Configurations</h2>
{{template "identity" .Inputs}}
{{template "references" .References}}
<h2>Comparability guard: {{.GuardVerdict}}</h2>
{{template "guard" .Guard}}
{{- range .Refusals}}
<p class="answer">Refused: {{.}}</p>
{{- end}}
</main>
</body>
</html>
`
