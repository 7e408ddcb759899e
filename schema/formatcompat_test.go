package schema_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestFormatV1KeepsTheFirstReleasesRequiredFields: the run format keeps
// its version, so a field added after the first release is optional. For
// every object the first release's JSON Schemas describe
// (testdata/compat/schema-2a73a39, copied from commit 2a73a39 of this
// repository), today's schema requires no field that one did not, keeps
// every property it had and the same schema constant.
func TestFormatV1KeepsTheFirstReleasesRequiredFields(t *testing.T) {
	for _, name := range []string{schema.SchemaManifest, schema.SchemaRecord, schema.SchemaClaims} {
		old := loadSchema(t, filepath.Join("..", "testdata", "compat", "schema-2a73a39", name+".schema.json"))
		b, err := schema.JSONSchema(name)
		if err != nil {
			t.Fatal(err)
		}
		var now any
		if err := json.Unmarshal(b, &now); err != nil {
			t.Fatal(err)
		}
		compareSchemas(t, name, "", old, now)
	}
}

func loadSchema(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// compareSchemas walks old and now side by side, at path.
func compareSchemas(t *testing.T, name, path string, old, now any) {
	t.Helper()
	switch o := old.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			t.Errorf("%s %s: was an object, now %T", name, path, now)
			return
		}
		if c, ok := o["const"]; ok && fmt.Sprint(c) != fmt.Sprint(n["const"]) {
			t.Errorf("%s %s: const %v, now %v", name, path, c, n["const"])
		}
		was := stringList(o["required"])
		for _, r := range stringList(n["required"]) {
			if !slices.Contains(was, r) {
				t.Errorf("%s %s: %q is required now but was not in the first release: a field added later must be optional", name, path, r)
			}
		}
		for k, ov := range o {
			if k == "required" || k == "description" || k == "enum" {
				continue
			}
			nv, ok := n[k]
			if !ok {
				if k == "properties" || strings.HasSuffix(path, "/properties") {
					t.Errorf("%s %s/%s: gone from today's schema", name, path, k)
				}
				continue
			}
			compareSchemas(t, name, path+"/"+k, ov, nv)
		}
	case []any:
		n, ok := now.([]any)
		if !ok {
			return
		}
		for i := range min(len(o), len(n)) {
			compareSchemas(t, name, fmt.Sprintf("%s[%d]", path, i), o[i], n[i])
		}
	}
}

func stringList(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return out
}
