package report

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/benchseal/benchseal/compare"
)

// The compare and decide JSON outputs validate against their published
// schemas, refused and decided alike.
func TestCompareAndDecideJSONMatchSchemas(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, n := range OutputSchemaNames {
		b, err := OutputSchema(n)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := c.AddResource("https://benchseal.dev/schema/"+n+"/v1", doc); err != nil {
			t.Fatal(err)
		}
	}
	cmpSchema := c.MustCompile("https://benchseal.dev/schema/compare/v1")
	decSchema := c.MustCompile("https://benchseal.dev/schema/decide/v1")
	ins := compareInputs(t)
	check := func(s *jsonschema.Schema, name string, write func(*bytes.Buffer) error) {
		t.Helper()
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, allow := range [][]string{nil, {compare.CheckWorkload}} {
		r, err := compare.Compare(ins, compare.Options{Guard: compare.GuardOptions{Allow: allow}, Correction: compare.CorrectionHolm})
		if err != nil {
			t.Fatal(err)
		}
		check(cmpSchema, "compare", func(b *bytes.Buffer) error { return CompareJSON(b, r) })
		for _, o := range compare.Objectives {
			d, err := compare.Decide(ins, compare.DecideOptions{Objective: o, Guard: compare.GuardOptions{Allow: allow}})
			if err != nil {
				t.Fatal(err)
			}
			check(decSchema, "decide "+o, func(b *bytes.Buffer) error { return DecideJSON(b, d) })
		}
	}
	// A refused comparison validates too.
	ins[0].Manifest.Workload.SHA256, ins[1].Manifest.Workload.SHA256 = "11", "00"
	r, _ := compare.Compare(ins, compare.Options{})
	if r.Guard.Verdict != compare.Refused {
		t.Fatalf("verdict %s", r.Guard.Verdict)
	}
	check(cmpSchema, "refused compare", func(b *bytes.Buffer) error { return CompareJSON(b, r) })
}
