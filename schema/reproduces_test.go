package schema

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestReproducesNamesARunManifestDigest: a reproduction run names its
// original by run-manifest digest; anything else in the field is invalid,
// in the Go checks (a manifest built in memory) and in the JSON Schema.
func TestReproducesNamesARunManifestDigest(t *testing.T) {
	good := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		digest string
		ok     bool
	}{
		{good, true},
		{strings.Repeat("ab", 32), false},             // no algorithm
		{"sha256:" + strings.Repeat("AB", 32), false}, // upper case
		{"sha512:" + strings.Repeat("ab", 64), false},
		{"", false},
	} {
		m := readManifest(t)
		m.Reproduces = &Reproduces{RunManifest: tc.digest, BundleRef: "pub.oci.tar"}
		ps := ValidateManifest(m, "manifest.json")
		hit := false
		for _, p := range ps {
			hit = hit || p.Field == "reproduces.run_manifest"
		}
		if hit == tc.ok {
			t.Errorf("digest %q: problems %v, want valid=%v", tc.digest, ps, tc.ok)
		}
		b, err := MarshalDocument(m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeManifest(bytes.NewReader(b), "manifest.json")
		var ve *ValidationError
		if tc.ok != (err == nil) || (err != nil && !errors.As(err, &ve)) {
			t.Errorf("digest %q: decode error %v, want valid=%v", tc.digest, err, tc.ok)
		}
	}
	m := readManifest(t)
	m.Reproduces = &Reproduces{RunManifest: good}
	b, _ := MarshalDocument(m)
	b = bytes.Replace(b, []byte(`"run_manifest"`), []byte(`"other": 1, "run_manifest"`), 1)
	if _, err := DecodeManifest(bytes.NewReader(b), "manifest.json"); err == nil || !strings.Contains(err.Error(), "reproduces") {
		t.Errorf("an unknown field under reproduces: %v, want a schema problem naming reproduces", err)
	}
}
