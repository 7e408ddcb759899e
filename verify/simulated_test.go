package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// TestVerifyRejectsASimulatedRunNotSynthetic: a signed bundle whose
// manifest records a capture with --simulate but states evidence
// self-run fails the schema check, naming the field.
func TestVerifyRejectsASimulatedRunNotSynthetic(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	i := -1
	for j, l := range b.Layers() {
		if l.Kind == artifact.KindManifest {
			i = j
		}
	}
	d := b.Layers()[i].Descriptor.Digest
	b.Close()
	raw, err := os.ReadFile(filepath.Join(p, "blobs", "sha256", d.Encoded()))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["evidence"] = schema.EvidenceSelfRun
	c := m["client"].(map[string]any)
	c["name"] = schema.CaptureClientName
	c["command_line"] = []string{"benchseal", "capture", "--simulate=true", "--no-probe=true"}
	edited, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	artifacttest.ReplaceLayer(t, p, i, append(edited, '\n'), nil)
	sig := artifacttest.SignStatementOf(t, p)
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
	res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sig}})
	if err == nil || res.Verified {
		t.Fatal("VERIFIED a simulated run stated self-run")
	}
	if c := res.Check(verify.CheckSchema); c == nil || c.Status != verify.StatusFailed || !strings.Contains(c.Reason, "client.command_line has --simulate") {
		t.Errorf("schema check %+v, want a failure naming evidence and client.command_line", c)
	}
}
