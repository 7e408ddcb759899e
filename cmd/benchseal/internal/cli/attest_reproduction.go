package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/reproduce"
	"github.com/benchseal/benchseal/verify"
)

// reproductionToAttest verifies the bundle and recomputes the verdicts of
// the reproduction run in dir against it (reproduce.Evaluate, as
// benchseal reproduce decided them), for Attest to sign. A bundle that
// does not verify is refused (exit 3); the verdicts are returned whatever
// they are: Attest grants the level only when every claim is REPRODUCED.
func reproductionToAttest(ctx context.Context, v *verify.Verifier, pol verify.Policy, bundle, dir, marginFlag string, alpha float64) (*verify.Reproduction, error) {
	margin, err := parseMargin(marginFlag)
	if err != nil {
		return nil, err
	}
	if !(alpha > 0 && alpha < 0.5) {
		return nil, usagef("--alpha %s: want 0 < alpha < 0.5", digits.Shortest(alpha))
	}
	b, err := artifact.Open(bundle)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return nil, rejected(fmt.Errorf("%s: %w", bundle, err))
		}
		return nil, err
	}
	defer b.Close()
	vr, err := v.VerifyBundle(ctx, b, pol)
	if err != nil || vr == nil || !vr.Verified {
		// %v: the outcome is rejected (ErrNotAttestable); the verify
		// error's own condition must not reach the exit-code mapping.
		return nil, rejected(errcond.Errorf(verify.ErrNotAttestable, "refusing to attest: %s did not verify (benchseal verify lists every check): %v", bundle, err))
	}
	rep, err := reproduce.Evaluate(ctx, reproduce.Original{Name: bundle, Bundle: b, Verification: vr}, dir, reproduce.Options{Margin: margin, Alpha: alpha})
	if errors.Is(err, reproduce.ErrNotAReproduction) {
		return nil, rejected(err)
	}
	if err != nil {
		return nil, err
	}
	r := &verify.Reproduction{Of: vr.ManifestDigest, Summary: attest.Reproduction{
		RunManifest: attest.Descriptor{Digest: map[string]string{"sha256": strings.TrimPrefix(rep.ReproductionManifestDigest, "sha256:")}},
		Margin:      rep.Margin, Alpha: rep.Alpha, Limits: rep.Limits,
	}, Withheld: rep.Withheld, Repeats: rep.Repeats.Reproduction}
	for _, c := range rep.Claims {
		r.Summary.Claims = append(r.Summary.Claims, attest.ReproducedClaim{Point: c.Point, Metric: c.Metric, Verdict: string(c.Verdict), Ratio: c.Ratio, Lo: c.Lo, Hi: c.Hi})
		r.RepeatsNeeded = append(r.RepeatsNeeded, c.RepeatsNeeded)
	}
	return r, nil
}
