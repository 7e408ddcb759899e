package redact

import (
	"reflect"
	"slices"
	"testing"
)

func TestArgsMasksCredentialsAndTheCallersSecret(t *testing.T) {
	const kind = "the --api-key-env key"
	for _, c := range []struct {
		name        string
		args        []string
		secret      string
		want        []string
		wantChanged []ArgChange
	}{
		{"nothing to mask", []string{"benchseal", "capture", "--rate=5"}, "", []string{"benchseal", "capture", "--rate=5"}, nil},
		{"credential flag", []string{"benchseal", "--set=engine.args=--api-key s3cr3tvalue99"}, "",
			[]string{"benchseal", "--set=engine.args=--api-key " + Mask},
			[]ArgChange{{Index: 1, Kind: "credential flag", Redacted: "--set=engine.args=--api-key " + Mask}}},
		{"the secret repeated", []string{"a", "--title=run with q9w8e7r6t5", "b"}, "q9w8e7r6t5",
			[]string{"a", "--title=run with " + Mask, "b"},
			[]ArgChange{{Index: 1, Kind: kind, Redacted: "--title=run with " + Mask}}},
		{"both kinds in one argument: the first found is named", []string{"--api-key s3cr3tvalue99 and q9w8e7r6t5"}, "q9w8e7r6t5",
			[]string{"--api-key " + Mask + " and " + Mask},
			[]ArgChange{{Index: 0, Kind: "credential flag", Redacted: "--api-key " + Mask + " and " + Mask}}},
		{"no secret given: an empty key masks nothing", []string{"x"}, "", []string{"x"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.args)
			got, changed := Args(c.args, c.secret, kind)
			if !slices.Equal(got, c.want) {
				t.Errorf("args %q, want %q", got, c.want)
			}
			if !reflect.DeepEqual(changed, c.wantChanged) {
				t.Errorf("changes %+v, want %+v", changed, c.wantChanged)
			}
			if !slices.Equal(in, c.args) {
				t.Errorf("the caller's args changed: %q", c.args)
			}
		})
	}
}
