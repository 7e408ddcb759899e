package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/verify"
)

type verifyOptions struct {
	report        reportOut
	io            *IO
	deps          *Deps
	bundle        string
	trust         trustFlags
	reviewers     []string
	levels        []string
	plan          string
	planSignature string
	signatures    []string
	output        string
	allowUnsigned bool
	allChecks     bool
	showClaims    bool
	requireAll    bool
}

func newVerifyCmd(io *IO, d *Deps) *cobra.Command {
	o := &verifyOptions{io: io, deps: d}
	cmd := &cobra.Command{
		Use:   "verify BUNDLE (--key PUB ... | --certificate-identity ID --certificate-oidc-issuer URL --trusted-root FILE) [--plan PLAN] [--require-attestation REVIEWER ... [--require-level LEVEL ...]]",
		Short: "Verify a bundle offline against pinned public keys (exit 3 when rejected)",
		Long: `verify checks BUNDLE fail-closed, in order: the container is safe to read; oci-layout
and index.json; the run manifest (artifactType, empty config, known layer media
types, limits); every blob's sha256 digest and size while streaming; the
signatures — only the keys given with --key are trusted, every one of them must
have signed the run (publisher and co-signers, see 'benchseal sign'; a
reviewer who attested goes in --require-attestation), a key inside the bundle
never counts; the signed in-toto
statement (payload type, predicate type, every subject digest, predicate); the
uncompressed digests and sizes (bounded zstd); schema and semantic validation
of the manifest, claims and every record; consistency of the record shards with
the plan; for an imported run, that re-importing its attached, hash-pinned
source files with the named importer gives exactly its records, provenance,
tool windows, load counts and external results (import-rederive); and the
recomputation of every claim when available.

It prints each check as passed, failed or skipped with the reason (or, with
--output json, a versioned JSON result) and exits 0 when verified, 3 when
rejected, 1 on error, 2 on usage errors. --signature adds a detached Sigstore
bundle, e.g. one made by 'cosign attest-blob' over 'benchseal inspect
--statement'. --allow-unsigned checks only integrity and says loudly that
nothing is authenticated.

Keyless publishers (e.g. 'cosign attest-blob' in CI with an OIDC identity) are
trusted with cosign's flags --certificate-identity(-regexp) and
--certificate-oidc-issuer(-regexp) and a Sigstore trusted root
(--trusted-root trusted_root.json, read offline): the certificate chain to a
Fulcio CA, its SCT, the transparency-log entry and the timestamps are checked
as sigstore-go does, and the signer's identity and issuer are printed.

--plan PLAN checks the run against its pre-registered plan (signature from
--plan-signature, PLAN.sigstore.json, or a plan referrer in the bundle; it
must be signed by a trusted publisher): every planned point × repeat present
with the planned counts, no unplanned point, SLO, definitions, boundary,
seed and workload hash equal, the plan signed before the run started when a
signed timestamp exists. Each deviation is named. Without --plan, a plan
carried in the bundle is checked when present.

--require-attestation REVIEWER (repeatable; a public key file or
IDENTITY@ISSUER_URL) requires a PASSED reviewer attestation (SLSA VSA v1)
over this run manifest signed by each reviewer. An attestation counts only
when its inputAttestations name a publisher signature that verified in this
run under a pinned key or identity: a reviewer vouches for the run as that
publisher signed it, so re-signing by another key leaves it "not
applicable". Every attestation found is listed with who, when and which
levels. --require-level LEVEL (repeatable) counts a required reviewer's
attestation only when it lists LEVEL: BENCHSEAL_INTEGRITY,
BENCHSEAL_RECOMPUTED, BENCHSEAL_PLAN_MATCHED, or BENCHSEAL_REPRODUCED (the
reviewer re-ran the bundle's test with 'benchseal reproduce' and every claim
was REPRODUCED; see 'benchseal attest --reproduction'). The levels are the
reviewer's word, checked only for being signed by that reviewer.

Reproduction referrers the bundle carries ('benchseal attest
--attach-reproduction') are listed with their run manifest digest and whether
a verified attestation names them; their blobs are digest-checked with the
bundle's. With --require-level BENCHSEAL_REPRODUCED, when the bundle carries
any, a required reviewer's attestation counts only when the reproduction it
names (by manifest.json digest) is one of them and that reproduction's
records pass the checks 'benchseal reproduce' makes before judging a claim: it
names this run as its original, it is another run (not the original's records
re-labelled), and it reaches the forced output length when the test forces
one. Its verdicts stay the reviewer's word ('benchseal attest --reproduction'
recomputes them). A bundle without reproduction referrers is checked on the
attestation alone.`,
		Example: `  benchseal verify run.tar --key publisher.pub
  benchseal verify run.tar --key publisher.pub --require-attestation reviewer.pub --output json
  benchseal verify run.tar --key publisher.pub --require-attestation reviewer.pub --require-level BENCHSEAL_REPRODUCED
  benchseal verify run.tar --allow-unsigned`,
		Args: exactArgs(1, "one bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			trusted := len(o.trust.keys) > 0 || o.trust.identityGiven()
			if !trusted && !o.allowUnsigned {
				return usagef("verify needs at least one --key or a --certificate-identity (or --allow-unsigned to check integrity only)")
			}
			if trusted && o.allowUnsigned {
				return usagef("--key and --allow-unsigned cannot be used together")
			}
			return runVerify(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	o.trust.bind(f, "key", "pinned public key PEM (repeatable; every key must have signed)")
	f.StringArrayVar(&o.reviewers, "require-attestation", nil, "reviewer whose PASSED attestation is required: a public key file or IDENTITY@ISSUER_URL (repeatable)")
	f.StringArrayVar(&o.levels, "require-level", nil, "level every --require-attestation reviewer's attestation must list, e.g. BENCHSEAL_REPRODUCED (repeatable)")
	f.StringVar(&o.plan, "plan", "", "pre-registered plan the run must match")
	f.StringVar(&o.planSignature, "plan-signature", "", "Sigstore bundle of the plan (default PLAN.sigstore.json when it exists)")
	f.StringArrayVar(&o.signatures, "signature", nil, "extra detached Sigstore bundle to check (repeatable)")
	enumFlag(f, &o.output, "output", "text", []string{"text", "json"}, "report format: text or json")
	o.report.bind(f, "VERIFIED, or REJECTED with the failed check, which exits 3", "a usage error or a file it cannot read")
	f.BoolVar(&o.allowUnsigned, "allow-unsigned", false, "UNSAFE: check integrity only; nothing is authenticated")
	f.BoolVar(&o.allChecks, "all-checks", false, "run every check even after the signature check failed (default: stop there)")
	f.BoolVar(&o.showClaims, "show-claims", false, "text output: list every claim, the matched ones too (default: only those mismatched, unverified, on a flagged point or changed under the current definitions; --output json lists every claim)")
	f.BoolVar(&o.requireAll, "require-recomputable", false, "reject the bundle when any claim cannot be recomputed from its records (default: a warning)")
	return cmd
}

func runVerify(ctx context.Context, o *verifyOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	keys, opts, err := o.trust.build()
	if err != nil {
		return err
	}
	var pol verify.Policy
	if len(o.levels) > 0 && len(o.reviewers) == 0 {
		return usagef("--require-level needs --require-attestation: the level is required of a reviewer")
	}
	for _, l := range o.levels {
		if !slices.Contains(attest.Levels, l) {
			return usagef("--require-level %q: want one of %s", l, strings.Join(attest.Levels, ", "))
		}
	}
	pol.RequireLevels = o.levels
	for _, r := range o.reviewers {
		s, err := parseReviewer(r)
		if err != nil {
			return err
		}
		pol.RequireAttestations = append(pol.RequireAttestations, s)
	}
	if o.plan != "" {
		if pol.Plan, pol.PlanSignature, err = readPlan(o.plan, o.planSignature); err != nil {
			return err
		}
	}
	pol.AllowUnsignedUnsafe = o.allowUnsigned
	pol.AllChecks = o.allChecks
	pol.RequireRecomputable = o.requireAll
	for _, p := range o.signatures {
		b, err := readFileLimited("--signature", p, artifact.MaxSignatureBundleSize, sigstoreBundleWant)
		if err != nil {
			return err
		}
		pol.Detached = append(pol.Detached, b)
	}
	opts = append(opts, o.deps.verifyOptions()...)
	v, err := verify.NewVerifier(keys, opts...)
	if err != nil {
		return err
	}
	rf, err := o.report.open(o.io, o.inputs()...)
	if err != nil {
		return err
	}
	defer rf.Discard()
	if o.allowUnsigned {
		fmt.Fprintln(o.io.ErrOut, "benchseal: WARNING: --allow-unsigned: signatures are NOT checked; NOTHING IS AUTHENTICATED")
	}
	res, verr := v.Verify(ctx, o.bundle, pol)
	if res == nil {
		return verr
	}
	if o.output == "json" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(rf.w, "%s\n", b)
	} else if err := report.WriteVerifyText(rf.w, res, report.VerifyTextOptions{ShowClaims: o.showClaims}); err != nil {
		return err
	}
	if err := rf.Commit(); err != nil {
		return err
	}
	if verr != nil {
		if ctx.Err() != nil {
			return verr
		}
		if res.Verified {
			return verr
		}
		return silentExit{ExitRejected}
	}
	return nil
}

// What readFileLimited's callers want in a file, for its error.
const (
	sigstoreBundleWant = "a Sigstore bundle"
	planWant           = "a plan (a pre-registered benchseal/plan/v1 or a load plan)"
)

// readFileLimited reads the file p given to flag, which should hold want
// (e.g. `a public key (PEM "PUBLIC KEY")`): an error names the flag, and
// one for a file over limit bytes (a bundle given where a key belongs)
// also says what was wanted.
func readFileLimited(flag, p string, limit int64, want string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s: over %d bytes: not %s", flag, p, limit, want)
	}
	return b, nil
}

// inputs are the files verify reads: its --out may name none of them.
func (o *verifyOptions) inputs() []string {
	in := append([]string{o.bundle, o.plan, o.planSignature}, o.signatures...)
	return append(append(in, o.reviewers...), o.trust.files()...)
}
