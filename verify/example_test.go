package verify_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/synth"
	"github.com/benchseal/benchseal/verify"
)

// A publisher packs and signs a run; a reader who trusts the publisher's
// public key verifies the bundle offline: signature, content, the
// records against the manifest, and every claim recomputed.
func ExampleVerifier_Verify() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "benchseal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The publisher: a small synthetic run, packed and signed. (A real
	// key comes from artifact.GenerateKey and artifact.LoadPrivateKey.)
	run := filepath.Join(dir, "run")
	opts := synth.DefaultOptions()
	opts.Requests, opts.Points, opts.Repeats, opts.Warmup, opts.WorkloadItems = 80, []float64{2, 8}, 1, 2, 20
	if _, _, err := synth.WriteRun(ctx, run, opts, false); err != nil {
		log.Fatal(err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := artifact.NewSigner(priv)
	if err != nil {
		log.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle")
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := artifact.Pack(ctx, run, bundle, artifact.PackOptions{Created: created, Signer: signer}); err != nil {
		log.Fatal(err)
	}

	// The reader: deployment settings (trusted keys) once, a policy per
	// call. An error means verification could not run; a rejected bundle
	// is a result with Verified false and the failed checks.
	v, err := verify.NewVerifier([]*artifact.PublicKey{signer.Public()})
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.Verify(ctx, bundle, verify.Policy{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified:", res.Verified)
	fmt.Println("authenticated:", res.Authenticated)
	fmt.Println("run:", res.RunID)
	// Output:
	// verified: true
	// authenticated: true
	// run: synth-concurrency-seed1-80
}
