package ingest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// Tolerance is the relative error imported claims allow.
const Tolerance = 1e-9

// ClaimSet builds the claims of an import point by point, in the order
// the claims are added. The first bad value makes Claims return an error.
type ClaimSet struct {
	defs   string
	points []*schema.PointClaim
	index  map[string]*schema.PointClaim
	err    error
}

// NewClaimSet starts the claims of a tool whose definitions are defs.
func NewClaimSet(defs string) *ClaimSet {
	return &ClaimSet{defs: defs, index: map[string]*schema.PointClaim{}}
}

func (c *ClaimSet) point(name string) *schema.PointClaim {
	p := c.index[name]
	if p == nil {
		p = &schema.PointClaim{Point: name, Metrics: []schema.Claim{}}
		c.index[name] = p
		c.points = append(c.points, p)
	}
	return p
}

// Add claims metric = n × mul (mul converts the tool's unit to the replay
// contract's: Millisecond for ms, Second for s, 1 for counts and rates).
// A missing or null value (empty n) is skipped. file names the source in
// errors.
func (c *ClaimSet) Add(file, point, metric, source string, n json.Number, mul int64) {
	c.add(file, point, metric, source, n, mul, "")
}

// AddNotRecomputable claims a value with the reason it cannot be
// recomputed from the stored records.
func (c *ClaimSet) AddNotRecomputable(file, point, metric, source string, n json.Number, mul int64, reason string) {
	c.add(file, point, metric, source, n, mul, reason)
}

func (c *ClaimSet) add(file, point, metric, source string, n json.Number, mul int64, reason string) {
	if c.err != nil || n == "" || strings.TrimSpace(string(n)) == "null" {
		return
	}
	v, err := ToFloat(n, mul)
	if err != nil {
		c.err = &InputError{File: file, Record: -1, Field: source, Err: err}
		return
	}
	p := c.point(point)
	p.Metrics = append(p.Metrics, schema.Claim{Metric: metric, Value: v, Source: source, NotRecomputable: reason})
}

// AddValue claims an already converted value.
func (c *ClaimSet) AddValue(point, metric, source string, v float64, reason string) {
	if c.err != nil {
		return
	}
	p := c.point(point)
	p.Metrics = append(p.Metrics, schema.Claim{Metric: metric, Value: v, Source: source, NotRecomputable: reason})
}

// Claims returns the claims, or nil when none were added.
func (c *ClaimSet) Claims() (*schema.Claims, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.points) == 0 {
		return nil, nil
	}
	out := &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: c.defs, DefinitionsVersion: schema.CurrentDefinitionsVersion(c.defs), Tolerance: Tolerance}
	for _, p := range c.points {
		out.Points = append(out.Points, *p)
	}
	return out, nil
}

// StatKeys maps the statistic names tools use to the replay contract's
// distribution keys. Percentiles the contract lacks are named the same way
// (p1 → p1, p25 → p25, p999 → p999).
var StatKeys = map[string]string{
	"avg": "mean", "mean": "mean", "std": "stddev", "stddev": "stddev", "std_dev": "stddev",
	"min": "min", "max": "max", "median": "p50", "count": "n",
	"p1": "p1", "p5": "p5", "p10": "p10", "p25": "p25", "p50": "p50", "p75": "p75",
	"p90": "p90", "p95": "p95", "p99": "p99", "p999": "p999", "p99.9": "p999", "p001": "p01", "p0.1": "p01", "p01": "p1", "p05": "p5",
}

// PointName returns the name of a load point: "concurrency-4", "rate-2.5".
func PointName(mode string, v float64) string {
	return fmt.Sprintf("%s-%s", mode, strings.TrimSuffix(strings.TrimRight(digits.Places(v, 6), "0"), "."))
}

// PointNames gives load points unique names: the first point called x
// keeps x, the next ones are x#2, x#3, … (skipping a name already given).
// The zero value is ready to use.
type PointNames struct {
	used map[string]bool
	next map[string]int
}

// Unique returns the name of the next point called name.
func (p *PointNames) Unique(name string) string {
	if p.used == nil {
		p.used, p.next = map[string]bool{}, map[string]int{}
	}
	out := name
	for k := max(p.next[name], 1); p.used[out]; {
		k++
		out = fmt.Sprintf("%s#%d", name, k)
		p.next[name] = k
	}
	p.used[out] = true
	return out
}
