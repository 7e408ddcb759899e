package report

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// decideModel is a decision laid out for people.
type decideModel struct {
	Objective, SLO, Target string
	Inputs                 []identityView
	References             []referenceView
	Verdict, GuardVerdict  string
	Guard                  table
	Refusals               []string
	Table                  table
	Footnotes              []string
	Answer                 string
	Margin                 string
	Limits                 []string
	// Winner is the winner's label, "" when none.
	Winner string
}

func objectiveMetric(obj string) string {
	switch obj {
	case compare.MinCostPerGoodToken:
		return replay.CostPerMillionGoodTokens
	case compare.MinEnergyPerGoodToken:
		return compare.EnergyPerGoodToken
	case compare.MaxCapacity:
		return "capacity"
	}
	return schema.MetricGoodput
}

// The decision table's columns, in the order newDecideModel writes them.
const (
	decConfig = iota
	decEvidence
	decHardware
	decPoint
	decGoodput
	decErrors
	decTokens
	decCost
	decCapacity
	decPrefix
	decRepeats
	decNotes
	// decEnergy, the accelerator energy per good token, is there only
	// when the objective is energy or some input measured it
	// (showEnergy).
	decEnergy
)

// showEnergy reports whether the decision table has the energy column.
func showEnergy(d *compare.Decision) bool {
	if d.Objective == compare.MinEnergyPerGoodToken {
		return true
	}
	for _, in := range d.Inputs {
		if in.Manifest != nil && in.Manifest.GPUMetrics != nil {
			return true
		}
	}
	return false
}

// objectiveColumn is the decision table's column of the objective.
func objectiveColumn(obj string) int {
	switch obj {
	case compare.MinCostPerGoodToken:
		return decCost
	case compare.MaxCapacity:
		return decCapacity
	case compare.MinEnergyPerGoodToken:
		return decEnergy
	}
	return decGoodput
}

func newDecideModel(d *compare.Decision) *decideModel {
	m := &decideModel{Objective: d.Objective, Verdict: d.Verdict, GuardVerdict: guardVerdict(d.Guard, false), Answer: d.Answer, Limits: d.Limits, Refusals: d.Guard.Refusals,
		Target: Decimal(replay.Exact(d.Target), hundred, 2) + " %"}
	m.SLO = d.SLO
	if m.SLO == "" {
		m.SLO = "none"
	}
	m.SLO += " (from " + sloSource(d.SLOSource) + ")"
	for i, in := range d.Inputs {
		m.Inputs = append(m.Inputs, newIdentity(inputLabel(i), in))
	}
	for _, in := range d.References {
		m.References = append(m.References, newReference(in))
	}
	m.Guard = guardTable(d.Guard, d.Inputs)
	cur := currencyOf(d.Inputs)
	gp, cost, capn := nameOf(schema.MetricGoodput, cur), nameOf(replay.CostPerMillionGoodTokens, cur), nameOf("capacity", cur)
	t := table{Head: []string{"configuration", "evidence", "hardware", "best point", gp.Header() + " median [95% CI]", "errors (error/timeout/cancelled/rejected/not sent of declared)",
		"completed output tokens", cost.Header(), "per-repeat capacity at " + m.Target + " attainment (" + capacityUnit(d.Inputs) + ")", "prefix cache", "repeats", "confidence notes"},
		Num: []bool{false, false, false, false, true, true, true, true, true, false, true, false}}
	en, withEnergy := nameOf(compare.EnergyPerGoodToken, cur), showEnergy(d)
	if withEnergy {
		t.Head = append(t.Head, en.Header()+" median [95% CI]")
		t.Num = append(t.Num, true)
	}
	var fn footnotes
	for i, r := range d.Rows {
		name := inputLabel(i)
		if i == d.Winner {
			name += " (WINNER)"
		} else if !r.Eligible {
			name += " (cannot win)"
		}
		ev := r.Evidence
		if ev == "synthetic" {
			ev = "SYNTHETIC"
		}
		point := r.Point
		if r.Load != "" {
			point += " (" + r.Load + ")"
		}
		errs := fmt.Sprintf("%d/%d/%d/%d/%d of %d", r.Errors["error"], r.Errors["timeout"], r.Errors["cancelled"], r.Errors["rejected"], r.Errors["not_sent"], r.Sent)
		tokens := "null"
		if !r.OutputTokens.IsNull() {
			tokens = Decimal(r.OutputTokens, one, 0)
		}
		costText := sideText(r.Cost, cost)
		if r.Cost.Summary.N == 0 {
			costText = "unknown"
			if !strings.HasPrefix(r.Cost.NullReason, "unknown") {
				costText = "null"
			}
		}
		notes := rowNotes(d, &r, withEnergy)
		capText := sideText(r.Capacity, capn)
		if b := r.CapacityBoundsText(); b != "" {
			capText = b
		}
		row := []string{name, ev, r.Hardware, point, sideText(r.Goodput, gp), errs, tokens, costText, capText, r.PrefixCache, strconv.Itoa(r.Repeats), fn.mark(dedupe(notes))}
		if withEnergy {
			row = append(row, sideText(r.Energy, en))
		}
		t.Rows = append(t.Rows, row)
	}
	m.Table = t
	m.Footnotes = fn.list
	if d.Winner >= 0 {
		m.Winner = inputLabel(d.Winner)
	}
	if d.Best >= 0 && d.RunnerUp >= 0 {
		on := nameOf(objectiveMetric(d.Objective), cur)
		s := "margin " + signedPercent(d.Margin) + " (" + inputLabel(d.Best) + " against " + inputLabel(d.RunnerUp) + ")"
		switch d.Objective {
		case compare.MinCostPerGoodToken:
			s = costMargin(d, "costs")
		case compare.MinEnergyPerGoodToken:
			s = costMargin(d, "uses")
		}
		if sh := d.Shift; sh != nil {
			diff := func(f float64) string {
				return Decimal(replay.Float(f), on.Scale, on.Places)
			}
			if sh.Bounded {
				s += fmt.Sprintf("; Hodges–Lehmann difference %s %s, %s%% CI [%s, %s]", diff(sh.Estimate), on.valueUnit(), digits.Float(100*sh.Confidence, 1), diff(sh.Low), diff(sh.High))
			} else {
				s += fmt.Sprintf("; Hodges–Lehmann difference %s %s, no bounded 95%% CI with these repeats", diff(sh.Estimate), on.valueUnit())
			}
		}
		s += fmt.Sprintf("; p = %s (Mann–Whitney U, two-sided, α = %v)", digits.PValue(d.P), d.Alpha)
		m.Margin = s
	}
	return m
}

// costMargin words a cost margin so its direction cannot be misread:
// Margin is how much more the runner-up pays (runner-up ÷ best − 1), so
// the best costs Margin ÷ (1 + Margin) less.
// rowNotes are the confidence notes of row r: why its objective, cost
// and (shown, not the objective) energy are undefined, why it cannot win,
// and the row's own notes.
func rowNotes(d *compare.Decision, r *compare.Row, withEnergy bool) []string {
	var notes []string
	if r.Objective.Summary.N == 0 {
		notes = append(notes, r.Objective.NullReason)
	}
	if r.Cost.Summary.N == 0 {
		notes = append(notes, "cost "+r.Cost.NullReason)
	}
	if withEnergy && r.Energy.Summary.N == 0 && d.Objective != compare.MinEnergyPerGoodToken {
		notes = append(notes, "energy "+r.Energy.NullReason)
	}
	if !r.Eligible && r.Ineligible != "" {
		notes = append(notes, r.Ineligible)
	}
	return append(notes, r.Notes...)
}

// costMargin says how much less the best row pays (verb "costs") or
// uses ("uses": energy) per good token than the runner-up.
func costMargin(d *compare.Decision, verb string) string {
	b, r := inputLabel(d.Best), inputLabel(d.RunnerUp)
	m := d.Margin.Rat()
	if m == nil {
		return "margin undefined (" + b + " against " + r + ")"
	}
	less := new(big.Rat).Quo(m, new(big.Rat).Add(m, big.NewRat(1, 1)))
	head := "margin: "
	if d.BoundsOverlap {
		head = "margin of the central values (the bounds overlap, so not shown by the scrapes): "
	}
	return fmt.Sprintf("%s%s %s %s %% less per good token than %s (%s %s %s %% more)",
		head, b, verb, Decimal(replay.Exact(less), hundred, 2), r, r, verb, Decimal(d.Margin, hundred, 2))
}

func signedPercent(v replay.Value) string {
	if v.IsNull() {
		return "undefined"
	}
	s := Decimal(v, hundred, 2)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + " %"
}

// DecideText writes a decision as text.
func DecideText(out io.Writer, d *compare.Decision) error {
	m := newDecideModel(d)
	var b strings.Builder
	fmt.Fprintf(&b, "benchseal decide: objective %s under SLO %s\n\ninputs\n", m.Objective, m.SLO)
	writeIdentityText(&b, m.Inputs, m.References)
	fmt.Fprintf(&b, "\ncomparability guard: %s\n", guardVerdict(d.Guard, true))
	textTable(&b, m.Guard, "  ")
	if len(m.Table.Rows) > 0 {
		b.WriteString("\ndecision table\n")
		textTable(&b, m.Table, "  ")
		for i, f := range m.Footnotes {
			fmt.Fprintf(&b, "  (%d) %s\n", i+1, f)
		}
	}
	fmt.Fprintf(&b, "\nANSWER: %s\n", m.Answer)
	if m.Margin != "" {
		fmt.Fprintf(&b, "  %s\n", m.Margin)
	}
	if len(m.Limits) > 0 {
		b.WriteString("limits:\n")
		for _, l := range m.Limits {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// DecideMarkdown writes a decision as GitHub-flavoured Markdown.
func DecideMarkdown(out io.Writer, d *compare.Decision) error {
	m := newDecideModel(d)
	var b strings.Builder
	fmt.Fprintf(&b, "# benchseal decide: %s\n\nSLO: %s\n\n**Answer:** %s\n", m.Objective, mdEscape(m.SLO), mdEscape(m.Answer))
	if m.Margin != "" {
		fmt.Fprintf(&b, "\n%s\n", mdEscape(m.Margin))
	}
	if len(m.Limits) > 0 {
		b.WriteString("\nLimits:\n\n")
		for _, l := range m.Limits {
			fmt.Fprintf(&b, "- %s\n", mdEscape(l))
		}
	}
	b.WriteString("\n## Inputs\n\n")
	writeIdentityMarkdown(&b, m.Inputs, m.References)
	fmt.Fprintf(&b, "\n## Comparability guard: %s\n\n", guardVerdict(d.Guard, false))
	mdTable(&b, m.Guard)
	if len(m.Table.Rows) > 0 {
		b.WriteString("\n## Decision table\n\n")
		mdTable(&b, m.Table)
		for i, f := range m.Footnotes {
			fmt.Fprintf(&b, "\n(%d) %s  ", i+1, mdEscape(f))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// decideDoc is a decision (schema "benchseal/decide/v1").
type decideDoc struct {
	Schema     text            `json:"schema"`
	Objective  text            `json:"objective"`
	SLO        text            `json:"slo"`
	SLOSource  text            `json:"slo_source"`
	Target     num             `json:"attainment_target"`
	Alpha      num             `json:"alpha"`
	Inputs     []inputJSON     `json:"inputs"`
	References []inputJSON     `json:"references"`
	Guard      guardJSON       `json:"guard"`
	Rows       []decideRowJSON `json:"rows"`
	Verdict    text            `json:"verdict"`
	Best       *text           `json:"best"`
	Winner     *text           `json:"winner"`
	RunnerUp   *text           `json:"runner_up"`
	Margin     num             `json:"margin"`
	Difference *differenceJSON `json:"difference"`
	P          num             `json:"p"`
	Answer     text            `json:"answer"`
	Limits     []text          `json:"limits"`
}

// decideRowJSON is one input's row of the decision table; Energy is
// there only when the decision shows energy.
type decideRowJSON struct {
	Label        text           `json:"label"`
	Name         text           `json:"name"`
	Evidence     text           `json:"evidence"`
	Hardware     text           `json:"hardware"`
	Point        text           `json:"point"`
	Load         text           `json:"load"`
	Objective    sideJSON       `json:"objective"`
	Goodput      sideJSON       `json:"goodput"`
	Cost         sideJSON       `json:"cost_per_million_good_tokens"`
	Capacity     sideJSON       `json:"capacity"`
	Energy       *sideJSON      `json:"energy_per_good_token_j,omitempty"`
	Errors       decideErrsJSON `json:"errors"`
	Sent         num            `json:"sent"`
	OutputTokens num            `json:"completed_output_tokens"`
	PrefixCache  text           `json:"prefix_cache"`
	Repeats      num            `json:"repeats"`
	Eligible     bool           `json:"eligible"`
	Ineligible   text           `json:"ineligible"`
	Notes        []text         `json:"notes"`
}

type decideErrsJSON struct {
	Error     num `json:"error"`
	Timeout   num `json:"timeout"`
	Cancelled num `json:"cancelled"`
	Rejected  num `json:"rejected"`
	NotSent   num `json:"not_sent"`
}

// differenceJSON is the shift between the best and the runner-up; low
// and high are null when the interval is unbounded.
type differenceJSON struct {
	Estimate   num `json:"estimate"`
	Low        num `json:"low"`
	High       num `json:"high"`
	Confidence num `json:"confidence"`
}

func newDecideRowJSON(i int, r compare.Row, energy bool) decideRowJSON {
	e := func(k string) num { return intNum(r.Errors[k]) }
	j := decideRowJSON{Label: text(inputLabel(i)), Name: text(r.Name), Evidence: text(r.Evidence), Hardware: text(r.Hardware), Point: text(r.Point), Load: text(r.Load),
		Objective: newSideJSON(r.Objective), Goodput: newSideJSON(r.Goodput), Cost: newSideJSON(r.Cost), Capacity: newSideJSON(r.Capacity),
		Errors: decideErrsJSON{e("error"), e("timeout"), e("cancelled"), e("rejected"), e("not_sent")}, Sent: intNum(r.Sent),
		OutputTokens: num(Number(r.OutputTokens)), PrefixCache: text(r.PrefixCache), Repeats: num(strconv.Itoa(r.Repeats)), Eligible: r.Eligible,
		Ineligible: text(r.Ineligible), Notes: texts(r.Notes)}
	if energy {
		s := newSideJSON(r.Energy)
		j.Energy = &s
	}
	return j
}

// DecideJSON writes a decision (schema "benchseal/decide/v1"; its JSON
// Schema is OutputSchema("decide")).
func DecideJSON(out io.Writer, d *compare.Decision) error {
	label := func(i int) *text {
		if i < 0 {
			return nil
		}
		l := text(inputLabel(i))
		return &l
	}
	doc := decideDoc{Schema: text(d.Schema), Objective: text(d.Objective), SLO: text(d.SLO), SLOSource: text(d.SLOSource),
		Target: num(Number(replay.Exact(d.Target))), Alpha: num(shortestFloat(d.Alpha)), Inputs: inputsJSON(d.Inputs), References: referencesJSON(d.References),
		Guard: newGuardJSON(d.Guard), Rows: make([]decideRowJSON, 0, len(d.Rows)), Verdict: text(d.Verdict), Best: label(d.Best), Winner: label(d.Winner),
		RunnerUp: label(d.RunnerUp), Margin: num(Number(d.Margin)), P: "null", Answer: text(d.Answer), Limits: texts(d.Limits)}
	for i, r := range d.Rows {
		doc.Rows = append(doc.Rows, newDecideRowJSON(i, r, showEnergy(d)))
	}
	if s := d.Shift; s != nil {
		doc.Difference = &differenceJSON{Estimate: num(shortestFloat(s.Estimate)), Low: "null", High: "null", Confidence: num(shortestFloat(s.Confidence))}
		if s.Bounded {
			doc.Difference.Low, doc.Difference.High = num(shortestFloat(s.Low)), num(shortestFloat(s.High))
		}
	}
	if d.Best >= 0 && d.RunnerUp >= 0 {
		doc.P = num(shortestFloat(d.P))
	}
	return writeJSON(out, doc, nil)
}

// capacityUnit names what the capacity column counts: the offered load of
// the inputs' load mode (concurrency, or requests per second offered), or
// "offered load" when the inputs differ or do not say.
func capacityUnit(ins []*compare.Input) string {
	mode := ""
	for _, in := range ins {
		if in.Manifest == nil || (mode != "" && in.Manifest.Load.Mode != mode) {
			return "offered load"
		}
		mode = in.Manifest.Load.Mode
	}
	switch mode {
	case schema.ModeConcurrency:
		return "concurrency, requests in flight"
	case schema.ModeRate:
		return "offered req/s"
	}
	return "offered load"
}
