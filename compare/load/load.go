package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// ErrRejected wraps the failure of a bundle that did not verify or a run
// directory that is not valid: checked and rejected.
var ErrRejected = errors.New("input rejected")

// ErrNeedKey is returned for a bundle when no key is pinned and unsigned
// input is not allowed: a usage mistake, not a bad bundle.
var ErrNeedKey = errors.New("a bundle needs a pinned key to verify it (--key), or explicitly allowing unsigned input (--allow-unsigned), which authenticates nothing")

// Options say how inputs are checked and replayed.
type Options struct {
	// Keys are the pinned public keys; each bundle must verify under one
	// of them (configurations from different publishers carry different
	// signatures). The key that verified it is recorded in the input.
	Keys []*artifact.PublicKey
	// AllowUnsignedUnsafe accepts bundles without checking signatures
	// (integrity only); each such input is labelled unsigned.
	AllowUnsignedUnsafe bool
	// Replay configures the recomputation (definitions, SLO, attainment
	// target); the same for every input.
	Replay replay.Options
	// Import re-derives an imported run from its attached source files
	// (the importer package's implementation, wired by the command). nil:
	// an imported input is rejected, since its records cannot be tied to
	// the tool's output.
	Import verify.ImportChecker
}

// Input opens path (a run directory or a bundle), checks it and replays
// it. A bundle that fails verification, or an invalid run directory, is
// an error wrapping ErrRejected that names the path.
func Input(ctx context.Context, path string, opts Options) (*compare.Input, error) {
	ctx = progress.Within(ctx, path) // the inputs are read one after the other
	if _, err := os.Stat(filepath.Join(path, schema.ManifestFile)); err == nil {
		return runDir(ctx, path, opts)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: no such run directory or bundle", path)
	}
	if len(opts.Keys) == 0 && !opts.AllowUnsignedUnsafe {
		return nil, errcond.Errorf(ErrNeedKey, "%s: a bundle needs a pinned key to verify it (--key), or explicitly allowing unsigned input (--allow-unsigned), which authenticates nothing", path)
	}
	b, err := artifact.Open(path)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return nil, errcond.Errorf(ErrRejected, "%s: input rejected: %w", path, err)
		}
		return nil, err
	}
	defer b.Close()
	vr, reused, err := verifyAny(ctx, b, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errcond.Errorf(ErrRejected, "%s: input rejected: verification failed: %w", path, err)
	}
	in := &compare.Input{Name: path, Manifest: b.Manifest(), Verification: compare.Verification{
		Status: compare.Unsigned, BundleDigest: vr.ManifestDigest, Warnings: vr.Warnings},
		WorkloadNotShipped: b.Manifest().Workload.SHA256 != "" && !verify.HasWorkload(b)}
	if vr.Authenticated {
		in.Verification.Status = compare.Verified
		for _, s := range vr.Signatures {
			if s.Verified {
				in.Verification.Keys = append(in.Verification.Keys, s.Key)
			}
		}
	}
	// The claims recompute of a verified bundle read its records; when
	// it replayed them as compare does, that replay is the input's.
	if in.Result = reused; in.Result == nil {
		if in.Result, err = replay.Replay(ctx, b, opts.Replay); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return in, nil
}

// verifyAny verifies b under each pinned key in turn (or unsigned when
// allowed) and returns the first verified result, with the claims
// recompute's replay of it when that is the replay opts ask for
// (replay.SameReplay; nil otherwise).
func verifyAny(ctx context.Context, b *artifact.Bundle, opts Options) (*verify.Result, *replay.Result, error) {
	sets := [][]*artifact.PublicKey{nil}
	if !opts.AllowUnsignedUnsafe {
		sets = sets[:0]
		for _, k := range opts.Keys {
			sets = append(sets, []*artifact.PublicKey{k})
		}
	}
	var errs []error
	for _, keys := range sets {
		var same *replay.Result
		// Replayed runs in the recompute's goroutine, which VerifyBundle
		// waits for before it returns.
		checker := replay.ClaimChecker{Replayed: func(o replay.Options, r *replay.Result) {
			if same == nil && replay.SameReplay(o, opts.Replay) {
				same = r
			}
		}}
		vopts := []verify.Option{verify.WithClaimChecker(checker)}
		if opts.Import != nil {
			vopts = append(vopts, verify.WithImportChecker(opts.Import))
		}
		v, err := verify.NewVerifier(keys, vopts...)
		if err != nil {
			return nil, nil, err
		}
		vr, err := v.VerifyBundle(ctx, b, verify.Policy{AllowUnsignedUnsafe: opts.AllowUnsignedUnsafe})
		if err == nil {
			return vr, same, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if len(keys) == 1 {
			err = fmt.Errorf("key %s: %w", keys[0].Fingerprint(), err)
		}
		errs = append(errs, err)
	}
	return nil, nil, errors.Join(errs...)
}

func runDir(ctx context.Context, path string, opts Options) (*compare.Input, error) {
	if _, err := artifact.ValidatePackable(ctx, path, 20); err != nil {
		if errors.Is(err, schema.ErrInvalid) {
			return nil, errcond.Errorf(ErrRejected, "%s: input rejected: %w", path, err)
		}
		return nil, err
	}
	rd, err := schema.OpenRunDir(path)
	if err != nil {
		return nil, err
	}
	if rd.Manifest().Imported() {
		if opts.Import == nil {
			return nil, errcond.Errorf(ErrRejected, "%s: input rejected: the run is imported but no import checker is configured", path)
		}
		if err := opts.Import.CheckImport(ctx, rd, rd.ReadAttachment); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errcond.Errorf(ErrRejected, "%s: input rejected: %w", path, err)
		}
	}
	in := &compare.Input{Name: path, Manifest: rd.Manifest(), Verification: compare.Verification{Status: compare.RunDirectory},
		WorkloadNotShipped: rd.Manifest().Workload.SHA256 != "" && rd.WorkloadPath == ""}
	if in.Result, err = replay.Replay(ctx, rd, opts.Replay); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}
