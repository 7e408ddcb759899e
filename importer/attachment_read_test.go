package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// probeRederiver is the import checker, also asking for an attachment the
// bundle lacks: the error verify's reader gives for it.
type probeRederiver struct {
	Rederiver
	got error
}

func (p *probeRederiver) CheckImportNotes(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) ([]string, error) {
	_, p.got = attachment("absent.json")
	return p.Rederiver.CheckImportNotes(ctx, run, attachment)
}

// TestVerifyReadsAttachmentsThroughTheBundle: verify's import check reads
// an imported bundle's source files with Bundle.ReadAttachment, the one
// reader that refuses an attachment declared over
// schema.MaxAttachmentSize (1 GiB) before reading it; verify had its own
// reader without the cap.
func TestVerifyReadsAttachmentsThroughTheBundle(t *testing.T) {
	files := importtest.AIPerfTimeBased(t, 1)
	tmp := t.TempDir()
	for i := range files {
		p := filepath.Join(tmp, filepath.Base(files[i].Name))
		if err := os.WriteFile(p, files[i].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[i].Name = p
	}
	dir := filepath.Join(tmp, "run")
	ctx := context.Background()
	if _, err := Import(ctx, "aiperf", files, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(tmp, "bundle")
	if _, err := artifact.Pack(ctx, dir, bundle, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	probe := &probeRederiver{}
	v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}), verify.WithImportChecker(probe))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, bundle, verify.Policy{AllowUnsignedUnsafe: true}); err != nil {
		t.Fatalf("verify: %v", err)
	}
	b, err := artifact.Open(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, want := b.ReadAttachment("absent.json")
	if probe.got == nil || want == nil || probe.got.Error() != want.Error() {
		t.Fatalf("verify's attachment reader says %v; Bundle.ReadAttachment says %v", probe.got, want)
	}
}
