package schema_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// A declared load beyond the limits (repeats
// 9·10^18 panicked, 3·10^8 exhausted memory, requests 9·10^18 printed
// negative counts) is invalid with the field named, never a panic or an
// allocation per declared cell.
func TestDeclaredLoadBeyondLimitsIsInvalidWithField(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(load map[string]any)
	}{
		{"repeats 9e18", "load.repeats", func(l map[string]any) { l["repeats"] = 9000000000000000000 }},
		{"repeats 3e8", "load.repeats", func(l map[string]any) { l["repeats"] = 300000000 }},
		{"requests 9e18", "load.points[0].requests", func(l map[string]any) {
			for _, p := range l["points"].([]any) {
				p.(map[string]any)["requests"] = 9000000000000000000
			}
		}},
		{"warmup 9e18", "load.warmup.requests", func(l map[string]any) { l["warmup"] = map[string]any{"requests": 9000000000000000000} }},
		{"concurrency 2^40", "load.points[0].concurrency", func(l map[string]any) {
			l["points"].([]any)[0].(map[string]any)["concurrency"] = 1 << 40
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["incomplete"], m["incomplete_reason"] = true, "x"
				tc.edit(m["load"].(map[string]any))
			})
			err := schema.ValidateRunDocuments(dir, 0)
			if !errors.Is(err, schema.ErrInvalid) {
				t.Fatalf("want invalid, got %v", err)
			}
			if !strings.Contains(err.Error(), `field "`+tc.field+`"`) {
				t.Errorf("error does not name %s:\n%v", tc.field, err)
			}
			if strings.Contains(err.Error(), "-") && strings.Contains(err.Error(), "have no record") {
				t.Errorf("negative count printed:\n%v", err)
			}
		})
	}
}

// The limits are one rule: CheckLoadLimits (replay, compare, plan) agrees
// with ValidateManifest and never overflows points × repeats.
func TestCheckLoadLimitsNamesField(t *testing.T) {
	l := &schema.Load{Mode: schema.ModeConcurrency, Repeats: schema.MaxRepeats, Points: make([]schema.Point, schema.MaxPoints)}
	err := schema.CheckLoadLimits(l, "plan")
	if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "points × repeats") {
		t.Fatalf("got %v", err)
	}
	if err := schema.CheckLoadLimits(&schema.Load{Repeats: 3, Points: make([]schema.Point, 4)}, "x"); err != nil {
		t.Fatal(err)
	}
}
