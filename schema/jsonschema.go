package schema

import (
	"bytes"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Names of the published JSON Schemas.
const (
	SchemaManifest = "manifest"
	SchemaRecord   = "record"
	SchemaClaims   = "claims"
)

// SchemaNames lists the published JSON Schemas, in the order documents
// appear in a run.
var SchemaNames = []string{SchemaManifest, SchemaRecord, SchemaClaims, SchemaPlan}

//go:embed jsonschema/*.schema.json
var schemaFS embed.FS

// JSONSchema returns the published JSON Schema (draft 2020-12) of a
// manifest, record or claims document.
func JSONSchema(name string) ([]byte, error) {
	if !slices.Contains(SchemaNames, name) {
		return nil, fmt.Errorf("read JSON Schema: unknown schema %q (want one of %s)", name, strings.Join(SchemaNames, ", "))
	}
	b, err := schemaFS.ReadFile("jsonschema/" + name + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("read JSON Schema %s: %w", name, err)
	}
	return b, nil
}

// compiled compiles every published schema in one compiler, each added
// first under its own $id, so that the plan schema's reference to the
// claims schema's definitions enum (one list for both) resolves without
// a loader.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	var ids []string
	for _, name := range SchemaNames {
		b, err := JSONSchema(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("compile JSON Schema %s: %w", name, err)
		}
		obj, _ := doc.(map[string]any)
		id, _ := obj["$id"].(string)
		if id == "" {
			return nil, fmt.Errorf("compile JSON Schema %s: no $id", name)
		}
		ids = append(ids, id)
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("compile JSON Schema %s: %w", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for i, name := range SchemaNames {
		sch, err := c.Compile(ids[i])
		if err != nil {
			return nil, fmt.Errorf("compile JSON Schema %s: %w", name, err)
		}
		out[name] = sch
	}
	return out, nil
})

var printer = message.NewPrinter(language.English)

// validateJSONSchema validates the JSON document b against the named schema
// and returns one problem per failed leaf keyword, sorted by field.
func validateJSONSchema(name string, b []byte, file string) ([]Problem, error) {
	schemas, err := compiled()
	if err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []Problem{{File: file, Message: "invalid JSON: " + err.Error()}}, nil
	}
	err = schemas[name].Validate(inst)
	if err == nil {
		return nil, nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, fmt.Errorf("validate %s: %w", file, err)
	}
	var probs []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			probs = append(probs, Problem{
				File:    file,
				Field:   jsonPath(e.InstanceLocation),
				Message: e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortStableFunc(probs, func(a, b Problem) int { return strings.Compare(a.Field, b.Field) })
	return slices.Compact(probs), nil
}

// jsonPath turns a JSON Pointer's tokens into a dotted path with [i] for
// array indexes, e.g. load.points[2].name.
func jsonPath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}
