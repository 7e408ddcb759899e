package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// importPackVerify imports files with tool, validates the run (schema and
// re-derivation), packs it and verifies the bundle with the claim and
// import checkers, returning verify's error.
func importPackVerify(t *testing.T, tool string, files []ingest.File) error {
	t.Helper()
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
	if _, err := Import(ctx, tool, files, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.CheckRunDir(ctx, dir, 10, nil); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if err := checkDir(t, dir); err != nil {
		t.Fatalf("validate (re-derive): %v", err)
	}
	bundle := filepath.Join(tmp, "bundle")
	if _, err := artifact.Pack(ctx, dir, bundle, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}), verify.WithImportChecker(Rederiver{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(ctx, bundle, verify.Policy{AllowUnsignedUnsafe: true})
	return err
}

// TestTimeBasedAIPerfRunVerifies: an AIPerf --benchmark-duration run, whose
// rates are over its summary's end_time − start_time, imports, validates,
// packs and verifies (verify rejected it: the rates were recomputed over
// benchmark_duration, 0.1 % higher); its request_throughput edited ×1.1 is
// rejected.
func TestTimeBasedAIPerfRunVerifies(t *testing.T) {
	if err := importPackVerify(t, "aiperf", importtest.AIPerfTimeBased(t, 1)); err != nil {
		t.Fatalf("verify: %v", err)
	}
	err := importPackVerify(t, "aiperf", importtest.AIPerfTimeBased(t, 1.1))
	var ce *verify.CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "request_throughput") {
		t.Fatalf("request_throughput ×1.1: verify %v, want a rejection naming it", err)
	}
}
