package verify_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

// TestVerifyReportsTheRecordsChecked: verify counts the records of its one
// pass against the number the layers declare; the recompute it feeds
// reports nothing of its own (the same records, counted once).
func TestVerifyReportsTheRecordsChecked(t *testing.T) {
	path, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	v, err := verify.NewVerifier([]*artifact.PublicKey{pub}, verify.WithClaimChecker(replay.ClaimChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	var r progress.Recorder
	if _, err := v.Verify(progress.With(context.Background(), r.Func()), path, verify.Policy{}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Last()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Phase != "verify: check records" || got[0].Total <= 0 || got[0].Done != got[0].Total {
		t.Errorf("updates %+v, want one phase that reaches its total", got)
	}
}
