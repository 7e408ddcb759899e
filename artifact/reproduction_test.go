package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// withReproduction returns a signed directory bundle carrying one
// reproduction referrer, and that referrer.
func withReproduction(t testing.TB) (string, artifact.Reproduction) {
	t.Helper()
	tmp := t.TempDir()
	orig, _ := artifacttest.SignedBundle(t, filepath.Join(tmp, "orig"))
	repro := artifacttest.PackRun(t, filepath.Join(tmp, "repro.tar"), artifacttest.RunOptions{Points: 1})
	ctx := context.Background()
	rd, err := artifact.AttachReproduction(ctx, orig, repro)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := artifact.AttachReproduction(ctx, orig, repro); err != nil || again.Digest != rd.Digest {
		t.Fatalf("attaching again: %v, %s (first %s)", err, again.Digest, rd.Digest)
	}
	if _, err := artifact.AttachReproduction(ctx, orig, orig); err == nil || !strings.Contains(err.Error(), "original run itself") {
		t.Fatalf("attaching the original to itself: %v", err)
	}
	b, err := artifact.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.CheckContent(ctx); err != nil {
		t.Fatal(err)
	}
	if len(b.Reproductions()) != 1 || len(b.Referrers()) != 1 {
		t.Fatalf("%d reproductions, %d signatures", len(b.Reproductions()), len(b.Referrers()))
	}
	return orig, b.Reproductions()[0]
}

// TestTamperedReproductionBlobRejected: a reproduction blob whose bytes
// are not its pinned digest (same size) fails the content check, naming
// the reproduction and the blob.
func TestTamperedReproductionBlobRejected(t *testing.T) {
	orig, r := withReproduction(t)
	b0, err := artifact.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	for _, l := range b0.Layers() {
		own[string(l.Descriptor.Digest)] = true
	}
	b0.Close()
	var l ocispec.Descriptor
	for _, rl := range r.Layers {
		if !own[string(rl.Descriptor.Digest)] && rl.Descriptor.Size > 0 {
			l = rl.Descriptor // a blob only the reproduction holds
		}
	}
	p := filepath.Join(orig, "blobs", "sha256", l.Digest.Encoded())
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.CheckContent(context.Background())
	if err == nil || !strings.Contains(err.Error(), "reproduction "+string(r.RunDescriptor.Digest)) || !strings.Contains(err.Error(), string(l.Digest)) {
		t.Fatalf("tampered reproduction blob: %v", err)
	}
}

// TestReproductionReferrerShapeRejected: a reproduction referrer edited by
// a hostile publisher (re-hashed, its index entry updated) is refused by
// Open with the reason.
func TestReproductionReferrerShapeRejected(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"annotation", "unexpected annotations", func(m map[string]any) { m["annotations"] = map[string]any{"x": "y"} }},
		{"artifactType", "artifactType", func(m map[string]any) { m["artifactType"] = "application/x" }},
		{"subject", "subject is not this bundle's run manifest", func(m map[string]any) {
			m["subject"].(map[string]any)["digest"] = "sha256:" + strings.Repeat("a", 64)
		}},
		{"dropped layer", "lists", func(m map[string]any) { ls := m["layers"].([]any); m["layers"] = ls[:len(ls)-1] }},
		{"swapped layers", "is not layer", func(m map[string]any) {
			ls := m["layers"].([]any)
			ls[1], ls[2] = ls[2], ls[1]
		}},
		{"run manifest digest", "reproduction run manifest", func(m map[string]any) {
			l := m["layers"].([]any)[0].(map[string]any)
			l["digest"] = m["layers"].([]any)[1].(map[string]any)["digest"]
			l["size"] = m["layers"].([]any)[1].(map[string]any)["size"]
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig, r := withReproduction(t)
			mp := filepath.Join(orig, "blobs", "sha256", r.Descriptor.Digest.Encoded())
			artifacttest.EditJSON(t, mp, c.edit)
			nb, err := os.ReadFile(mp)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(mp)
			d := artifact.DigestBytes(nb)
			if err := os.WriteFile(filepath.Join(orig, "blobs", "sha256", d.Encoded()), nb, 0o644); err != nil {
				t.Fatal(err)
			}
			artifacttest.EditJSON(t, filepath.Join(orig, "index.json"), func(idx map[string]any) {
				for _, e := range idx["manifests"].([]any) {
					if e := e.(map[string]any); e["digest"] == string(r.Descriptor.Digest) {
						e["digest"], e["size"] = string(d), len(nb)
					}
				}
			})
			_, err = artifact.Open(orig)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error with %q, got %v", c.want, err)
			}
		})
	}
}

// FuzzReproductionReferrer: the reproduction referrer parsers (what pull
// applies to a registry's bytes) never panic and accept only what they
// check: a parsed referrer's subject is the run manifest given.
func FuzzReproductionReferrer(f *testing.F) {
	orig, r := withReproduction(f)
	b, err := artifact.Open(orig)
	if err != nil {
		f.Fatal(err)
	}
	run := b.RunDescriptor()
	mb, err := b.ReadReproductionManifest(r)
	b.Close()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(mb, r.ReproductionRunBytes())
	f.Add([]byte(`{"schemaVersion":2}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, mb, rb []byte) {
		m, err := artifact.ParseReproductionReferrer(mb, "fuzz", run)
		if err != nil {
			return
		}
		if m.Subject == nil || m.Subject.Digest != run.Digest {
			t.Fatal("accepted a referrer of another subject")
		}
		_, _, _ = artifact.CheckReproductionRun(m, rb, "fuzz")
	})
}
