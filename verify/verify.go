package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
	"github.com/sigstore/sigstore-go/pkg/root"
)

// Verifier holds the deployment settings of verification: the pinned keys
// (the only keys ever trusted — a key found inside a bundle never is) and
// the options.
type Verifier struct {
	keys        []*artifact.PublicKey
	identities  []Identity
	trusted     root.TrustedMaterial
	noSCT       bool
	checker     ClaimChecker
	importer    ImportChecker
	maxProblems int
}

// Option configures a Verifier. Options return errors so contradictory or
// invalid settings fail at once.
type Option func(*Verifier) error

// WithClaimChecker plugs in the metric recomputation (the replay package's
// implementation). Without it the claims-recompute check is reported as
// skipped.
func WithClaimChecker(c ClaimChecker) Option {
	return func(v *Verifier) error {
		if c == nil {
			return errors.New("verify: WithClaimChecker(nil)")
		}
		if v.checker != nil {
			return errors.New("verify: WithClaimChecker given twice")
		}
		v.checker = c
		return nil
	}
}

// WithImportChecker plugs in the re-derivation of imported runs from
// their attached source files (the importer package's implementation).
// Without it an imported run is rejected by the import check: its records
// could not be tied to the tool's output.
func WithImportChecker(c ImportChecker) Option {
	return func(v *Verifier) error {
		if c == nil {
			return errors.New("verify: WithImportChecker(nil)")
		}
		if v.importer != nil {
			return errors.New("verify: WithImportChecker given twice")
		}
		v.importer = c
		return nil
	}
}

// NewVerifier returns a verifier that trusts exactly the given public keys.
func NewVerifier(trust []*artifact.PublicKey, opts ...Option) (*Verifier, error) {
	v := &Verifier{maxProblems: 20}
	seen := map[string]bool{}
	for _, k := range trust {
		if k == nil {
			return nil, errors.New("verify: nil key")
		}
		if seen[k.Fingerprint()] {
			continue
		}
		seen[k.Fingerprint()] = true
		v.keys = append(v.keys, k)
	}
	for _, o := range opts {
		if err := o(v); err != nil {
			return nil, err
		}
	}
	if len(v.identities) > 0 && v.trusted == nil {
		return nil, errors.New("verify: keyless identities need a trusted root (WithTrustedRoot)")
	}
	return v, nil
}

// Policy is the per-call policy.
type Policy struct {
	// AllowUnsignedUnsafe checks an unsigned bundle's integrity only: the
	// signature and statement checks are skipped and the result says that
	// nothing is authenticated.
	AllowUnsignedUnsafe bool
	// Detached holds extra Sigstore bundles (JSON) to check as signatures
	// over the run manifest, e.g. one made by `cosign attest-blob` over the
	// bundle's statement.
	Detached [][]byte
	// Plan is the pre-registered plan the run must match (decoded by
	// plan.Decode), and PlanSignature its Sigstore bundle (nil: look for a
	// plan referrer in the bundle). Without Plan, a plan carried in the
	// bundle is checked when present.
	Plan          *plan.Plan
	PlanSignature []byte
	// RequireAttestations names the reviewers (keys or keyless identities)
	// each of whom must have signed a PASSED verification summary of this
	// run manifest.
	RequireAttestations []Signer
	// RequireLevels are levels (attest.Levels) that each required
	// reviewer's attestation must list, e.g. attest.LevelReproduced; an
	// attestation by that reviewer without them does not count.
	RequireLevels []string
	// AllChecks runs every check even after the signature check failed
	// (by default verification stops there: the rest would only describe
	// content nobody vouches for).
	AllChecks bool
	// RequireRecomputable rejects a bundle with any claim that cannot be
	// recomputed from its records (including those the publisher marked
	// not_recomputable); by default they pass with a warning.
	RequireRecomputable bool
}

// Verify opens the bundle at path and verifies it; see VerifyBundle.
// Failures to read the path at all (it does not exist) are returned as
// plain errors with a nil Result.
func (v *Verifier) Verify(ctx context.Context, path string, p Policy) (*Result, error) {
	res := newResult(path)
	b, err := artifact.Open(path)
	if err != nil {
		if !errors.Is(err, artifact.ErrInvalid) {
			return nil, err
		}
		return res, res.openFailed(err)
	}
	defer b.Close()
	return v.verify(ctx, b, p, res)
}

// VerifyBundle verifies an opened bundle fail-closed, running the checks in
// CheckOrder. It returns the Result in every case; the error is nil only
// when the bundle verified, and otherwise joins *CheckError values (each
// wrapping ErrRejected) or is an operational error (context cancelled).
func (v *Verifier) VerifyBundle(ctx context.Context, b *artifact.Bundle, p Policy) (*Result, error) {
	return v.verify(ctx, b, p, newResult(b.Path()))
}

func (v *Verifier) verify(ctx context.Context, b *artifact.Bundle, p Policy, res *Result) (*Result, error) {
	var errs []error
	failed := func(ce *CheckError) { errs = append(errs, ce) }
	if len(v.keys) == 0 && len(v.identities) == 0 && !p.AllowUnsignedUnsafe {
		return nil, errors.New("verify: no pinned public key or identity (use AllowUnsignedUnsafe to check integrity only)")
	}
	describeRun(b, res)

	// 1-3. Container, layout and manifest structure: checked by Open.
	passStructure(b, res)

	// 4. Every stored blob's size and digest: checked by the content pass
	// below, which reads each layer once, or on their own when that pass
	// does not run to the end (see checkDescriptors). The signatures need
	// only the run manifest, whose digest Open recomputed, so they come
	// first and a bundle nobody vouches for is rejected without reading
	// its layers twice.

	// 5-6. Signatures by pinned keys and the signed statement.
	if ce := v.checkSigned(ctx, b, p, res); ce != nil {
		failed(ce)
	}

	// Decompressing, validating and recomputing every record of a bundle
	// nobody vouches for is not worth the time unless the caller wants
	// the full list; the cheap checks after them still run.
	skipContent := len(errs) > 0 && !p.AllChecks
	if skipContent {
		skipContentChecks(res, "not run: the signature check failed (verify --all-checks runs it anyway)")
	}

	// 7-9. One streaming pass: uncompressed digests, schema, consistency,
	// feeding the claims recompute (11) that runs beside it.
	var claims *claimsRun
	defer func() {
		if claims != nil {
			claims.abandon()
		}
	}()
	var contentErrs []*CheckError
	if !skipContent {
		var feed *recordFeed
		if claims = v.startClaimsFor(ctx, b); claims != nil {
			feed = claims.feed
		}
		contentErrs = v.checkContent(ctx, b, res, feed)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if ce := v.settleDescriptors(ctx, b, res, skipContent, len(contentErrs) == 0); ce != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		// A stored blob that is not what its descriptor says explains
		// whatever the content pass found: report it alone.
		failed(ce)
		return res, res.finish(errs)
	}
	for _, ce := range contentErrs {
		failed(ce)
	}

	// 10. An imported run re-derives from its attached source files.
	if len(errs) > 0 {
		res.skip(CheckImport, "not run: an earlier check failed")
	} else if ce := v.checkImport(ctx, b, res); ce != nil {
		failed(ce)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}

	// The server's state before the claims (its failure is reported after them).
	serverErr := checkServerStateBeforeClaims(b, res, skipContent)

	// 11. Recompute the claims.
	if ce := v.recomputeClaims(b, p, res, &claims, skipContent, len(errs) > 0); ce != nil {
		failed(ce)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}

	if serverErr != nil {
		failed(res.fail(CheckConsistency, "manifest server-metrics evidence", serverErr))
	}

	// 12. The pre-registered plan; 13. reviewer attestations.
	if ce := v.checkPlan(ctx, b, p, res); ce != nil {
		failed(ce)
	}
	if ce := v.checkAttestations(ctx, b, p, res); ce != nil {
		failed(ce)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, res.finish(errs)
}

// describeRun copies what the manifest says about the run into res (its
// ids, evidence, model, hardware, trace, builds) and adds the warnings
// that hold whatever the checks find: an incomplete run, completeness or
// a workload or shard origin nothing checks, external results as
// published.
func describeRun(b *artifact.Bundle, res *Result) {
	m := b.Manifest()
	res.RunID, res.Sessions = m.RunID, m.Workload.Sessions.Summary()
	res.Evidence, res.Model, res.Hardware, res.Trace = m.Evidence, m.Model.Name, m.HardwareSummary(), m.Workload.Trace.Summary()
	res.ClientBuild = m.Client.Build
	if m.Source != nil {
		res.ImporterBuild = m.Source.Importer
	}
	if m.Incomplete {
		res.Incomplete, res.IncompleteReason = true, m.IncompleteReason
		res.Warnings = append(res.Warnings, "the run is marked INCOMPLETE ("+m.IncompleteReason+"): declared requests without a record count as not sent and as misses in SLO attainment")
	}
	for _, u := range schema.UnverifiedCompleteness(m) {
		res.Warnings = append(res.Warnings, "UNVERIFIED completeness: "+u)
	}
	if w := workloadNotShipped(b); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if unsigned, local, signed := m.Shards.ShardOrigins(); len(unsigned)+len(local)+len(signed) > 0 {
		res.Warnings = append(res.Warnings, shardOriginWarning(unsigned, local, signed))
	}
	res.ManifestDigest = string(b.RunDescriptor().Digest)
	for _, e := range m.External {
		for _, k := range slices.Sorted(maps.Keys(e.Results)) {
			res.UnverifiedExternal = append(res.UnverifiedExternal, ExternalResult{e.Kind, k, e.Results[k], e.UnverifiedLabel()})
		}
		if e.Status != "" {
			res.UnverifiedExternal = append(res.UnverifiedExternal, ExternalResult{e.Kind, "status", e.Status, e.UnverifiedLabel()})
		}
	}
	if n := len(res.UnverifiedExternal); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d external result(s) UNVERIFIED: the numbers in manifest.external are as published by the source, not recomputed (no per-request records)", n))
	}
}

// checkSigned settles checks 5 and 6: the signatures by the pinned keys
// and identities and the signed statement, or, under
// AllowUnsignedUnsafe, both skipped with every referrer listed as not
// checked.
func (v *Verifier) checkSigned(ctx context.Context, b *artifact.Bundle, p Policy, res *Result) *CheckError {
	if !p.AllowUnsignedUnsafe {
		return v.checkSignatures(ctx, b, p, res)
	}
	msg := "UNSAFE: --allow-unsigned: signatures not checked, NOTHING IS AUTHENTICATED"
	res.skip(CheckSignature, msg)
	res.skip(CheckStatement, msg)
	res.Warnings = append(res.Warnings, "nothing is authenticated: the bundle's integrity was checked, not who made it")
	for _, r := range b.Referrers() {
		res.Signatures = append(res.Signatures, SignatureResult{Source: "referrer " + string(r.Descriptor.Digest), Reason: "not checked (--allow-unsigned)"})
	}
	return nil
}

// contentChecks are the checks of the content pass and the claims
// recompute beside it (7-9, 11), skipped together when the pass does not
// run or a stored blob explains what it would find.
var contentChecks = []string{CheckUncompressed, CheckSchema, CheckConsistency, CheckClaims}

// skipContentChecks marks every content check skipped, for why.
func skipContentChecks(res *Result, why string) {
	for _, n := range contentChecks {
		res.skip(n, why)
	}
}

// startClaimsFor starts the claims recompute beside the content pass
// when a claim checker is configured and there is something to replay:
// claims, or, for a flag checker, the run itself (it replays a run
// without claims too, for its flagged points). It returns nil otherwise.
func (v *Verifier) startClaimsFor(ctx context.Context, b *artifact.Bundle) *claimsRun {
	if _, flags := v.checker.(FlagChecker); v.checker != nil && (b.Claims() != nil || flags) {
		return v.startClaims(ctx, b)
	}
	return nil
}

// recomputeClaims settles check 11 from the recompute started beside the
// content pass (*claims, nil when none was started): skipped when the
// content pass did not run (its checks are already marked skipped), no
// checker is configured, an earlier check failed or the run has no claims
// (a flag checker's flagged points are still taken), else judged by
// checkClaims. Once it has taken the recompute's result it sets *claims
// to nil: the caller's deferred abandon has nothing left to stop.
func (v *Verifier) recomputeClaims(b *artifact.Bundle, p Policy, res *Result, claims **claimsRun, skipContent, earlierFailed bool) *CheckError {
	switch {
	case skipContent:
	case v.checker == nil:
		res.skip(CheckClaims, "no claim checker configured (metric recomputation not run)")
	case earlierFailed:
		res.skip(CheckClaims, "not run: an earlier check failed")
	case b.Claims() == nil:
		res.skip(CheckClaims, "the run has no claims")
		if *claims != nil {
			r := (*claims).wait()
			*claims = nil
			res.setFlagged(r.flags, r.err, true)
		}
	default:
		r := (*claims).wait()
		*claims = nil
		res.setFlagged(r.flags, r.err, false)
		return v.checkClaims(res, r.checks, r.err, p.RequireRecomputable, b.Manifest().Shards != nil)
	}
	return nil
}

// passStructure passes checks 1-3, which Open checked: the container, the
// layout and the run manifest's structure.
func passStructure(b *artifact.Bundle, res *Result) {
	res.pass(CheckContainer, "only oci-layout, index.json and sha256 blobs; no links, devices, duplicates or unreferenced blobs")
	res.pass(CheckLayout, "oci-layout 1.0.0; index.json lists one run manifest and its signature referrers")
	res.pass(CheckManifest, fmt.Sprintf("artifactType %s, empty config, %d layers of known media types", artifact.ArtifactTypeRun, len(b.Layers())))
}

// settleDescriptors runs checkDescriptors (the stored blobs were all
// streamed when the content pass ran, skipContent false, and found
// nothing, contentOK). When a stored blob fails, the content checks that
// ran are marked skipped instead, as when the blobs were checked before
// anything else, unless ctx ended (the caller returns ctx's error).
func (v *Verifier) settleDescriptors(ctx context.Context, b *artifact.Bundle, res *Result, skipContent, contentOK bool) *CheckError {
	ce := v.checkDescriptors(ctx, b, res, !skipContent && contentOK)
	if ce != nil && ctx.Err() == nil && !skipContent {
		skipContentChecks(res, "not run: a stored blob did not verify")
	}
	return ce
}

// checkDescriptors settles check 4. When the content pass read every
// layer to its end (streamed says so), each stored blob's size and digest
// were checked as it streamed and only the signature blobs remain;
// otherwise every stored blob is hashed now, without decompressing, so the
// report says whether the blobs are intact even when content was not
// checked or failed.
func (v *Verifier) checkDescriptors(ctx context.Context, b *artifact.Bundle, res *Result, streamed bool) *CheckError {
	var err error
	if streamed {
		for _, r := range b.Referrers() {
			if _, err = b.ReadSignature(r); err != nil {
				break
			}
		}
		if err == nil {
			err = b.CheckReproductions(ctx)
		}
	} else {
		err = b.CheckBlobs(ctx)
	}
	if err != nil {
		check, blob, cause := artifactErr(err)
		if check == CheckContainer {
			check = CheckDescriptors
		}
		return res.fail(check, blob, cause)
	}
	msg := fmt.Sprintf("%d layers and %d signature blobs match their sha256 digests and sizes", len(b.Layers()), len(b.Referrers()))
	if n := len(b.Reproductions()); n > 0 {
		msg += fmt.Sprintf(", and the blobs of %d reproduction referrer(s)", n)
	}
	res.pass(CheckDescriptors, msg)
	return nil
}

// workloadNotShipped returns the warning for a manifest that states a
// workload.sha256 while the bundle carries no workload layer, else "": the
// hash is then the publisher's word, nothing checks which requests were
// sent, and compare does not count the workload as the same.
func workloadNotShipped(b *artifact.Bundle) string {
	m := b.Manifest()
	if m.Workload.SHA256 == "" || HasWorkload(b) {
		return ""
	}
	why := "the workload is not shipped in the bundle"
	if m.Workload.Private {
		why = "the workload is private (workload.private) and not shipped"
	}
	return fmt.Sprintf("UNVERIFIED workload (not shipped): workload.sha256 %s is the publisher's word: %s, so nothing checks which prompts were sent (compare counts the workload as unknown, not the same)", m.Workload.SHA256, why)
}

// HasWorkload reports whether the bundle carries a workload layer.
func HasWorkload(b *artifact.Bundle) bool {
	for _, l := range b.Layers() {
		if l.Kind == artifact.KindWorkload {
			return true
		}
	}
	return false
}

// shardOriginWarning says how the members of a merged run were obtained:
// pulled with --allow-unsigned, merged from directories, or pulled with a
// signature the merger says it checked. The bundle holds no shard bundle or
// signature, so verify checks none of them: every member's origin is
// UNVERIFIED, the merger's word.
func shardOriginWarning(unsigned, local, signed []int) string {
	var parts []string
	if len(unsigned) > 0 {
		parts = append(parts, fmt.Sprintf("shard(s) %s pulled with merge --pull --allow-unsigned (integrity checked, signer not)", intList(unsigned)))
	}
	if len(local) > 0 {
		parts = append(parts, fmt.Sprintf("shard(s) %s merged from local directories (no shard signature checked)", intList(local)))
	}
	if len(signed) > 0 {
		parts = append(parts, fmt.Sprintf("shard(s) %s pulled with a signature the merger says it checked (shards.members[].pulled; the shard bundles and their signatures are not in this bundle, so it is the merger's word)", intList(signed)))
	}
	return "UNVERIFIED shard origin: " + strings.Join(parts, "; ") + ": this bundle's signature covers the merge, not who captured them"
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
