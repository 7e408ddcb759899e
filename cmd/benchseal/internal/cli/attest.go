package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/reproduce"
	"github.com/benchseal/benchseal/verify"
)

type attestOptions struct {
	io             *IO
	deps           *Deps
	bundle         string
	key            string
	sigstoreBundle string
	trust          trustFlags
	plan           string
	planSignature  string
	verifierID     string
	resourceURI    string
	reproduction   string
	attachRepro    string
	margin         string
	alpha          float64
}

func newAttestCmd(io *IO, d *Deps) *cobra.Command {
	o := &attestOptions{io: io, deps: d}
	cmd := &cobra.Command{
		Use:   "attest BUNDLE --key REVIEWER.KEY (--publisher-key PUB | --certificate-identity ... --trusted-root FILE) [--plan PLAN] [--reproduction DIR [--margin 10%]]",
		Short: "Verify and recompute a bundle, then sign a reviewer attestation (SLSA VSA v1) as its own referrer",
		Long: `attest is the reviewer's signature: "I verified and recomputed this bundle".
It first runs the full verification of 'benchseal verify' against the
publisher's key or keyless identity — every digest, every record, the
publisher's signature, the recomputation of every claim and, with --plan, the
pre-registered plan — and refuses (exit 3) when anything fails. Then it signs
an in-toto statement whose subject is the run manifest, with an SLSA
Verification Summary Attestation v1 predicate
(https://slsa.dev/verification_summary/v1): verifier.id (the reviewer's key
fingerprint, or --verifier-id), timeVerified, resourceUri, policy (benchseal's
version and definitions, and the plan's digest), inputAttestations (the
publisher signatures verified), verificationResult PASSED and verifiedLevels
BENCHSEAL_INTEGRITY, BENCHSEAL_RECOMPUTED (claims recomputed and matched),
BENCHSEAL_PLAN_MATCHED (the run matched its signed plan). The attestation is
stored as its own OCI referrer of the run manifest (one DSSE signature per
Sigstore bundle; never a second signature in the publisher's) and written
beside the bundle as BUNDLE.attestation.sigstore.json (as
BUNDLE.<key id>.attestation.sigstore.json when that file holds another
reviewer's, which is kept).

--reproduction DIR attests a reproduction as well: DIR is the run directory
'benchseal reproduce' captured against the reviewer's endpoint (its manifest
names this bundle's run manifest). attest recomputes every claim's verdict
from the two runs, as reproduce decided them (same --margin and --alpha), and
adds the level BENCHSEAL_REPRODUCED only when every claim is REPRODUCED; the
predicate's benchsealReproduction names the reproduction run's manifest.json
digest, the margin, alpha and every claim's verdict with its ratio interval.
When any claim is NOT REPRODUCED or INCONCLUSIVE nothing is signed: each such
claim is listed and attest exits 3. The reproduction run itself is not put
into the bundle unless --attach-reproduction REPRO.tar names it packed
('benchseal pack DIR --out REPRO.tar'): after signing, attest adds it as a
reproduction referrer of the run manifest (its manifest.json must be DIR's,
the one the attestation names), so push and pull carry it with the original
and 'verify --require-level BENCHSEAL_REPRODUCED' checks the attested
reproduction is the one carried. Otherwise push it as its own bundle (its
manifest names the original).
'verify --require-attestation REVIEWER --require-level BENCHSEAL_REPRODUCED'
requires such an attestation.

--sigstore-bundle FILE attaches an attestation made elsewhere (e.g. keyless
with 'cosign attest-blob --bundle' in CI) after checking that it is a PASSED
VSA whose subject is this bundle's run manifest; its signature is checked by
'verify --require-attestation'.`,
		Example: `  benchseal attest run.tar --key reviewer.key --publisher-key publisher.pub
  benchseal attest run.tar --key reviewer.key --publisher-key publisher.pub --plan plan.json
  benchseal attest run.tar --key reviewer.key --publisher-key publisher.pub --reproduction repro --margin 10%
  benchseal attest run.tar --sigstore-bundle vsa.sigstore.json`,
		Args: exactArgs(1, "one bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			if (o.key == "") == (o.sigstoreBundle == "") {
				return usagef("give exactly one of --key and --sigstore-bundle")
			}
			if o.attachRepro != "" && o.reproduction == "" {
				return usagef("--attach-reproduction needs --reproduction: the attached bundle must be the reproduction attested")
			}
			if o.reproduction == "" {
				for _, n := range []string{"margin", "alpha"} {
					if cmd.Flags().Changed(n) {
						return usagef("--%s judges a reproduction: give --reproduction DIR with it", n)
					}
				}
			}
			if o.reproduction != "" && o.key == "" {
				return usagef("--reproduction needs --key: the reviewer signs the reproduction's verdicts")
			}
			if o.key != "" && len(o.trust.keys) == 0 && !o.trust.identityGiven() {
				return usagef("attest verifies the publisher's signature first: give --publisher-key or a --certificate-identity")
			}
			return runAttest(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.key, "key", "", "the reviewer's private key (benchseal or cosign format)")
	f.StringVar(&o.sigstoreBundle, "sigstore-bundle", "", "attach this externally made attestation (Sigstore bundle) instead of signing one")
	o.trust.bind(f, "publisher-key", "the publisher's public key the bundle must be signed by (repeatable)")
	f.StringVar(&o.plan, "plan", "", "pre-registered plan the run must match (adds BENCHSEAL_PLAN_MATCHED)")
	f.StringVar(&o.planSignature, "plan-signature", "", "Sigstore bundle of the plan (default PLAN.sigstore.json when it exists)")
	f.StringVar(&o.reproduction, "reproduction", "", "run directory of 'benchseal reproduce' of this bundle: attest BENCHSEAL_REPRODUCED when every claim is REPRODUCED")
	f.StringVar(&o.attachRepro, "attach-reproduction", "", "with --reproduction: the reproduction packed (pack DIR --out FILE), added to the bundle as a reproduction referrer")
	f.StringVar(&o.margin, "margin", "10%", "with --reproduction: equivalence margin, as for reproduce (10% or 0.1)")
	f.Float64Var(&o.alpha, "alpha", reproduce.DefaultAlpha, "with --reproduction: level of each one-sided half of the equivalence test, as for reproduce")
	f.StringVar(&o.verifierID, "verifier-id", "", "verifier.id to write (default: the reviewer key's fingerprint)")
	f.StringVar(&o.resourceURI, "resource-uri", "", "resourceUri to write: the OCI reference of the bundle ending in @sha256:<manifest digest> (default urn:benchseal:run:<id>@<digest>)")
	return cmd
}

func runAttest(ctx context.Context, o *attestOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	if o.sigstoreBundle != "" {
		return attachExternal(ctx, o.io, o.bundle, o.sigstoreBundle, artifact.PredicateTypeVSA)
	}
	if o.attachRepro != "" {
		if err := checkAttachArg(o.attachRepro, o.reproduction); err != nil {
			return err
		}
	}
	s, err := loadSigner(o.io, o.key)
	if err != nil {
		return err
	}
	keys, opts, err := o.trust.build()
	if err != nil {
		return err
	}
	opts = append(opts, o.deps.verifyOptions()...)
	v, err := verify.NewVerifier(keys, opts...)
	if err != nil {
		return err
	}
	var pol verify.Policy
	if o.plan != "" {
		if pol.Plan, pol.PlanSignature, err = readPlan(o.plan, o.planSignature); err != nil {
			return err
		}
	}
	ao := verify.AttestOptions{VerifierID: o.verifierID, ResourceURI: o.resourceURI, Version: Version}
	if o.reproduction != "" {
		if ao.Reproduction, err = reproductionToAttest(ctx, v, pol, o.bundle, o.reproduction, o.margin, o.alpha); err != nil {
			return err
		}
	}
	if o.attachRepro != "" {
		if err := checkAttachable(o.attachRepro, ao.Reproduction); err != nil {
			return err
		}
	}
	res, err := v.Attest(ctx, o.bundle, pol, s, ao)
	if err != nil {
		if res != nil && res.Verification != nil && !errors.Is(err, verify.ErrNotReproduced) {
			// The diagnosis goes to stderr beside the error returned below,
			// which already makes the exit non-zero: a failed write of it
			// has nothing more to change.
			_ = report.WriteVerifyText(o.io.ErrOut, res.Verification, report.VerifyTextOptions{})
		}
		if errors.Is(err, verify.ErrNotAttestable) || errors.Is(err, verify.ErrNotReproduced) {
			return rejected(err)
		}
		return err
	}
	dp, kept := artifact.DetachedPathFor(o.bundle, artifact.SuffixAttestation, s.Public())
	if err := writeAtomic(dp, res.SigstoreBundle); err != nil {
		return err
	}

	fmt.Fprintf(o.io.Out, "attested %s\n  run id     %s\n  manifest   %s\n  reviewer   %s\n  levels     %s\n  referrer   %s\n  detached   %s\n",
		o.bundle, res.Verification.RunID, res.Verification.ManifestDigest, s.Public().Fingerprint(), strings.Join(res.Levels, ", "), res.Referrer, dp)
	if r := ao.Reproduction; r != nil {
		fmt.Fprint(o.io.Out, report.AttestedReproductionText(o.reproduction, &r.Summary))
	}
	if o.attachRepro != "" {
		rd, err := artifact.AttachReproduction(ctx, o.bundle, o.attachRepro)
		if err != nil {
			return fmt.Errorf("attested, but attaching %s failed: %w", o.attachRepro, err)
		}
		fmt.Fprintf(o.io.Out, "  attached   %s as reproduction referrer %s\n", o.attachRepro, rd.Digest)
	}
	for _, w := range res.Withheld {
		fmt.Fprintf(o.io.Out, "  %s\n", w)
	}
	if kept != "" {
		fmt.Fprintf(o.io.Out, "  kept       %s (another reviewer's detached attestation)\n", kept)
	}
	return nil
}

// checkAttachArg says plainly what is wrong with --attach-reproduction
// before anything is evaluated or signed: a missing file (error, with
// the pack command that makes it from the --reproduction directory) or a
// run directory that was never packed (usage error), as checkBundleArg.
func checkAttachArg(path, reproDir string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--attach-reproduction %s: no such file or directory: pack the reproduction first (benchseal pack %s --out %s)", path, reproDir, path)
	}
	if err := checkBundleArg(path); err != nil {
		return fmt.Errorf("--attach-reproduction: %w", err)
	}
	return nil
}

// checkAttachable refuses a packed reproduction whose manifest.json is not
// the one the attestation names (that of the --reproduction directory).
func checkAttachable(path string, r *verify.Reproduction) error {
	b, err := artifact.Open(path)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return rejected(fmt.Errorf("--attach-reproduction %s: %w", path, err))
		}
		return err
	}
	defer b.Close()
	got := b.Layers()[0].Descriptor.Digest
	if want := "sha256:" + r.Summary.RunManifest.Digest["sha256"]; string(got) != want {
		return rejected(fmt.Errorf("--attach-reproduction %s: its manifest.json is %s, but the reproduction attested (--reproduction) has %s: pack that directory", path, got, want))
	}
	return nil
}
