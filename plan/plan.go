package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// SchemaV1 is the schema field of a plan document.
const SchemaV1 = "benchseal/plan/v1"

// PredicateType is the in-toto predicate type of a signed plan.
const PredicateType = "https://benchseal.dev/attestation/plan/v1"

// MaxSize bounds a plan document.
const MaxSize = 4 << 20

// ErrPlan is the root of every plan error: of a pre-registered plan here,
// and of the load plan capture executes (its --plan file and load flags).
var ErrPlan = errors.New("invalid plan")

// Plan is a pre-registered test plan (schema benchseal/plan/v1; JSON
// Schema via `benchseal schema plan`).
type Plan struct {
	Schema string `json:"schema"`
	Title  string `json:"title,omitempty"`
	// Workload fixes what is sent: a dataset with its hash, or synthetic
	// prompts whose lengths the load points give.
	Workload Workload `json:"workload"`
	// Load is the matrix of load points, counts, warmup and repeats (the
	// fields of a capture plan).
	Load Load `json:"load"`
	// SLO is the objective goodput will be judged by.
	SLO schema.SLO `json:"slo"`
	// Definitions names the metric definitions claims will follow.
	Definitions string `json:"definitions"`
	// Boundary is the measurement boundary (client-streaming,
	// server-timer, non-streaming).
	Boundary string `json:"boundary"`
	// Metrics lists the metric paths that will be claimed.
	Metrics []string `json:"metrics"`
	// Configurations names the configurations to be compared, each run
	// separately under this plan.
	Configurations []Configuration `json:"configurations,omitempty"`
	// StartAt is the common start (RFC 3339) of a sharded capture of the
	// plan: every shard waits for it (capture --start-at overrides).
	StartAt string `json:"start_at,omitempty"`
}

// Workload is the planned workload.
type Workload struct {
	// Kind is "synthetic" (prompt and output lengths per point) or
	// "dataset".
	Kind    string `json:"kind"`
	Dataset string `json:"dataset,omitempty"`
	// SHA256 is the workload hash the run's manifest must carry.
	SHA256 string `json:"sha256,omitempty"`
	Items  int    `json:"items,omitempty"`
}

// Load is the planned load: the same fields as a capture load plan.
type Load struct {
	Mode           string          `json:"mode"`
	Points         []schema.Point  `json:"points"`
	Warmup         schema.Warmup   `json:"warmup"`
	Repeats        int             `json:"repeats"`
	RequestTimeout schema.Duration `json:"request_timeout,omitempty"`
	MaxOutstanding int             `json:"max_outstanding,omitempty"`
	Seed           int64           `json:"seed"`
	InputTokens    int             `json:"input_tokens,omitempty"`
	OutputTokens   int             `json:"output_tokens,omitempty"`
}

// Configuration is one configuration to be compared.
type Configuration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Decode reads a plan strictly: one JSON value, no duplicate keys, valid
// against the published JSON Schema, no unknown fields; then Validate.
// name names the file in errors.
func Decode(r io.Reader, name string) (*Plan, error) {
	var p Plan
	if err := schema.DecodeDocument(r, MaxSize, name, schema.SchemaPlan, &p); err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) {
			var lines []string
			for _, pr := range ve.Problems {
				lines = append(lines, "\n  "+pr.String())
			}
			return nil, errcond.Errorf(ErrPlan, "invalid plan: %d problem(s)%s", len(ve.Problems), strings.Join(lines, ""))
		}
		return nil, errcond.Errorf(ErrPlan, "invalid plan: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// Validate checks what the JSON Schema cannot: unique point names, a
// workload hash for a dataset, known definitions, and no empty metric.
// The load's own rules (ranges, modes) are capture's: a plan is executed
// by capture, which checks them again (capture.FromPlan).
func (p *Plan) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Schema != SchemaV1 {
		bad("schema %q, want %q", p.Schema, SchemaV1)
	}
	seen := map[string]bool{}
	for i, pt := range p.Load.Points {
		if pt.Name == "" {
			bad("load.points[%d]: a planned point needs a name", i)
		}
		if seen[pt.Name] {
			bad("load.points[%d]: duplicate name %q", i, pt.Name)
		}
		seen[pt.Name] = true
	}
	if p.Load.Repeats < 1 {
		bad("load.repeats %d: must be at least 1", p.Load.Repeats)
	}
	if p.StartAt != "" {
		if _, err := time.Parse(time.RFC3339Nano, p.StartAt); err != nil {
			bad("start_at %q: want an RFC 3339 time", p.StartAt)
		}
	}
	if err := schema.CheckLoadLimits(&schema.Load{Points: p.Load.Points, Warmup: p.Load.Warmup, Repeats: p.Load.Repeats, MaxOutstanding: p.Load.MaxOutstanding}, "plan"); err != nil {
		errs = append(errs, err)
	}
	if p.Workload.Kind == "dataset" && !sha256Hex.MatchString(p.Workload.SHA256) {
		bad("workload.sha256: a dataset workload needs its sha256 (64 lowercase hex)")
	}
	if p.Workload.SHA256 != "" && !sha256Hex.MatchString(p.Workload.SHA256) {
		bad("workload.sha256 %q: want 64 lowercase hex", p.Workload.SHA256)
	}
	if len(errs) > 0 {
		return errcond.Errorf(ErrPlan, "invalid plan: %w", errors.Join(errs...))
	}
	return nil
}

// Canonical returns the plan's canonical bytes: the compact JSON encoding
// of the decoded plan. Its sha256 is the plan's digest, whatever the
// formatting of the file it came from.
func (p *Plan) Canonical() ([]byte, error) { return json.Marshal(p) }

// Digest returns "sha256:<hex>" of Canonical.
func (p *Plan) Digest() (string, error) {
	b, err := p.Canonical()
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:]), nil
}

// Ref returns what a run captured under the plan records of it in its
// manifest: the canonical digest, the title and the metric list.
func (p *Plan) Ref() (*schema.PlanRef, error) {
	d, err := p.Digest()
	if err != nil {
		return nil, err
	}
	return &schema.PlanRef{SHA256: strings.TrimPrefix(d, "sha256:"), Title: p.Title, Metrics: slices.Clone(p.Metrics)}, nil
}

// Indent returns the canonical plan indented for people (what plan init
// writes and plan show prints).
func (p *Plan) Indent() ([]byte, error) {
	b, err := p.Canonical()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// statement is the in-toto statement of a signed plan: its subject is the
// plan's canonical digest, its predicate the plan itself.
type statement struct {
	Type          string          `json:"_type"`
	Subject       []subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

const statementTypeV1 = "https://in-toto.io/Statement/v1"

// Statement returns the in-toto Statement v1 a publisher signs to
// pre-register the plan (subject "plan.json" with the canonical digest,
// predicate the canonical plan).
func (p *Plan) Statement() ([]byte, error) {
	c, err := p.Canonical()
	if err != nil {
		return nil, err
	}
	s := sha256.Sum256(c)
	return json.Marshal(statement{
		Type:          statementTypeV1,
		Subject:       []subject{{Name: "plan.json", Digest: map[string]string{"sha256": hex.EncodeToString(s[:])}}},
		PredicateType: PredicateType,
		Predicate:     c,
	})
}

// ParseStatement decodes a signed plan's statement: the predicate must be
// a valid plan whose canonical digest is the single subject's. It returns
// the plan and its digest ("sha256:<hex>").
func ParseStatement(payload []byte) (*Plan, string, error) {
	if len(payload) > 2*MaxSize {
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: statement over %d bytes", 2*MaxSize)
	}
	var st statement
	if err := schema.DecodeStrictJSON(payload, &st); err != nil {
		// %v: DecodeStrictJSON's DecodeError is also schema.ErrInvalid
		// (an invalid run); a statement that does not decode is ErrPlan
		// alone.
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: statement: %v", err)
	}
	switch {
	case st.Type != statementTypeV1:
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: _type %q", st.Type)
	case st.PredicateType != PredicateType:
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: predicate type %q, want %q", st.PredicateType, PredicateType)
	case len(st.Subject) != 1 || len(st.Subject[0].Digest) != 1 || !sha256Hex.MatchString(st.Subject[0].Digest["sha256"]):
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: want exactly one subject with one sha256 digest")
	}
	p, err := Decode(bytes.NewReader(st.Predicate), "signed plan")
	if err != nil {
		return nil, "", err
	}
	d, err := p.Digest()
	if err != nil {
		return nil, "", err
	}
	if d != "sha256:"+st.Subject[0].Digest["sha256"] {
		return nil, "", errcond.Errorf(ErrPlan, "invalid plan: subject digest sha256:%s is not the plan's canonical digest %s", st.Subject[0].Digest["sha256"], d)
	}
	return p, d, nil
}
