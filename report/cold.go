package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// ColdMeaning says what the cold column holds, wherever it is printed.
const ColdMeaning = "cold = the point's warmup requests (phase warmup), sent before its measured ones and never counted in them"

// coldDists lists the cold column's distributions in output order, with
// their JSON keys.
func coldDists(c *replay.ColdResult) []struct {
	key string
	d   replay.Dist
} {
	return []struct {
		key string
		d   replay.Dist
	}{{schema.MetricTTFT, c.TTFT}, {schema.MetricE2E, c.E2E}}
}

// coldValue formats a cold scalar in ms, or NullText with its reason.
func coldValue(c *replay.ColdResult, key string, v replay.Value) (value, unit string) {
	if why, ok := c.NullReasons[key]; ok {
		return NullText(why), ""
	}
	return Decimal(v, nsToMS, 3), "ms"
}

// coldRows prints a point's cold column (nil: no warmup records) as rows
// of their own, after the measured ones.
func coldRows(p *replay.PointResult) []row {
	c := p.Cold
	if c == nil {
		return nil
	}
	out := []row{{"cold", fmt.Sprintf("warmup: %d requests, %d ok; %s", c.Requests, c.OK, ColdMeaning), ""}}
	if pc := prefixCacheText(c); pc != "" {
		out = append(out, row{"cold prefix cache", pc, ""})
	}
	v, u := coldValue(c, "first_ttft_ns", c.FirstTTFTNS)
	label := "cold first ttft"
	if u != "" {
		// The request goes in the label: the unit column holds the unit.
		label += " (request " + schema.EscapeText(c.FirstID, false) + ")" // a publisher string: one line
	}
	out = append(out, row{label, v, u})
	if c.AfterProbe != "" {
		out = append(out, row{"cold after probe", "an unrecorded preflight probe was answered before this warmup: a cold start of the server went into it, not into this column (capture --no-preflight keeps it)", ""})
	}
	v, u = coldValue(c, "duration_ns", c.DurationNS)
	out = append(out, row{"cold warmup duration", v, u})
	for _, d := range coldDists(c) {
		name := "cold " + strings.TrimSuffix(d.key, "_ns")
		if why, ok := c.NullReasons[d.key]; ok {
			out = append(out, row{name, NullText(why), ""})
			continue
		}
		out = append(out, row{name, distText(distCells(d.d, nsToMS)), "ms"})
	}
	return out
}

// prefixCacheText says the point's prefix-cache state and who says so
// ("" when the manifest states none).
func prefixCacheText(c *replay.ColdResult) string {
	switch c.PrefixCacheSource {
	case "":
		if c.PrefixCache == "" {
			return ""
		}
		return c.PrefixCache + " when the point's first request was sent"
	case "reset":
		return c.PrefixCache + " when the point's first request was sent (a recorded successful reset before it)"
	case "declared":
		return c.PrefixCache + " when the point's first request was sent (declared by the publisher: unverified)"
	}
	return c.PrefixCache + " (" + c.PrefixCacheSource + ")"
}

// distText is a distribution's cells (replay.CoreDistKeys) on one line.
func distText(cells []string) string {
	var parts []string
	for i, f := range replay.CoreDistKeys[1:] {
		parts = append(parts, f+" "+cells[i+1])
	}
	return fmt.Sprintf("n %s  %s", cells[0], strings.Join(parts, "  "))
}

// coldJSON is a point's cold column as the "cold" object of the replay
// JSON contract.
func coldJSON(c *replay.ColdResult) object {
	o := object{{"requests", intNum(c.Requests)}, {"ok", intNum(c.OK)}, {"first_id", text(c.FirstID)},
		{"first_ttft_ns", num(Number(c.FirstTTFTNS))}, {"duration_ns", num(Number(c.DurationNS))}}
	if c.PrefixCache != "" {
		o = append(o, member{"prefix_cache", text(c.PrefixCache)}, member{"prefix_cache_source", text(c.PrefixCacheSource)})
	}
	if c.AfterProbe != "" {
		o = append(o, member{"after_probe", text(c.AfterProbe)})
	}
	for _, d := range coldDists(c) {
		o = append(o, member{d.key, distJSON(d.d)})
	}
	if len(c.NullReasons) > 0 {
		o = append(o, member{"null_reasons", sortedObject(c.NullReasons)})
	}
	return o
}

// coldCSV lists a point's cold column as CSV metric paths and values
// ("cold.first_ttft_ns", "cold.ttft_ns.p50", …), and its null reasons
// as "cold.null_reason.KEY".
func coldCSV(c *replay.ColdResult) [][2]string {
	out := [][2]string{
		{"cold.requests", strconv.FormatInt(c.Requests, 10)},
		{"cold.ok", strconv.FormatInt(c.OK, 10)},
		{"cold.first_id", c.FirstID},
		{"cold.first_ttft_ns", csvNum(c.FirstTTFTNS)},
		{"cold.duration_ns", csvNum(c.DurationNS)},
	}
	if c.PrefixCache != "" {
		out = append(out, [2]string{"cold.prefix_cache", c.PrefixCache}, [2]string{"cold.prefix_cache_source", c.PrefixCacheSource})
	}
	for _, d := range coldDists(c) {
		for _, f := range replay.DistKeys {
			v, _ := d.d.Field(f)
			out = append(out, [2]string{"cold." + d.key + "." + f, csvNum(v)})
		}
	}
	for _, k := range []string{"first_ttft_ns", "duration_ns", schema.MetricTTFT, schema.MetricE2E} {
		if why, ok := c.NullReasons[k]; ok {
			out = append(out, [2]string{"cold.null_reason." + k, why})
		}
	}
	return out
}

// coldView is the HTML cold table of a point: scalar rows, then the
// distributions.
func coldView(c *replay.ColdResult) (scalars []scalarRow, dists []distRow) {
	scalars = append(scalars, scalarRow{Metric: "Warmup requests", Value: fmt.Sprintf("%d (%d ok)", c.Requests, c.OK), Text: true})
	if pc := prefixCacheText(c); pc != "" {
		scalars = append(scalars, scalarRow{Metric: "Prefix cache", Value: pc, Text: true})
	}
	for _, s := range []struct {
		key, name string
		v         replay.Value
	}{{"first_ttft_ns", "First-request TTFT (" + c.FirstID + ")", c.FirstTTFTNS}, {"duration_ns", "Warmup duration", c.DurationNS}} {
		if why, ok := c.NullReasons[s.key]; ok {
			scalars = append(scalars, scalarRow{Metric: s.name, Value: NullText(why), Text: true})
			continue
		}
		scalars = append(scalars, scalarRow{Metric: s.name, Value: Decimal(s.v, nsToMS, 3), Unit: "ms"})
	}
	for _, d := range coldDists(c) {
		row := distRow{Name: "cold " + distNames[d.key], Unit: "ms"}
		if why, ok := c.NullReasons[d.key]; ok {
			row.Null, row.Span = NullText(why), len(replay.CoreDistKeys)
		} else {
			row.Cells = distCells(d.d, nsToMS)
		}
		dists = append(dists, row)
	}
	return scalars, dists
}
