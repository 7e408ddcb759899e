package verify

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/artifact"
)

type sigInput struct {
	source string
	data   []byte
}

// publishers returns every signer that must have signed the run: the
// pinned keys and the keyless identities.
func (v *Verifier) publishers() []Signer {
	var out []Signer
	for _, k := range v.keys {
		out = append(out, Signer{Key: k})
	}
	for i := range v.identities {
		out = append(out, Signer{Identity: &v.identities[i]})
	}
	return out
}

func (v *Verifier) checkSignatures(ctx context.Context, b *artifact.Bundle, p Policy, res *Result) *CheckError {
	var inputs []sigInput
	for _, r := range b.ReferrersOf(artifact.PredicateTypeRun) {
		data, err := b.ReadSignature(r)
		if err != nil {
			_, blob, cause := artifactErr(err)
			return res.fail(CheckSignature, blob, cause)
		}
		inputs = append(inputs, sigInput{"referrer " + string(r.Descriptor.Digest), data})
	}
	for i, d := range p.Detached {
		inputs = append(inputs, sigInput{fmt.Sprintf("detached %d", i+1), d})
	}
	if ce := listStale(b, res, len(inputs) == 0); ce != nil {
		return ce
	}
	if len(inputs) == 0 {
		res.skip(CheckStatement, "no signature")
		return res.fail(CheckSignature, string(b.RunDescriptor().Digest), errors.New("the bundle is not signed (no signature referrer)"))
	}
	digestBytes, _ := hex.DecodeString(strings.TrimPrefix(string(b.RunDescriptor().Digest), "sha256:"))
	want, err := artifact.MarshalStatement(b.Statement())
	if err != nil {
		return res.fail(CheckStatement, "", err)
	}
	signers := v.publishers()
	verifiedBy := map[int]bool{}
	var stmtErr *CheckError
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil
		}
		sr := SignatureResult{Source: in.source, Digest: string(artifact.DigestBytes(in.data))}
		sb, err := parseSigstore(in.data)
		if sb != nil {
			sr.Hint = sb.hint
		}
		if err != nil {
			sr.Reason = err.Error()
			res.Signatures = append(res.Signatures, sr)
			continue
		}
		who, idx, err := v.verifyAny(sb, signers, digestBytes)
		if err != nil {
			sr.Reason = err.Error()
			res.Signatures = append(res.Signatures, sr)
			continue
		}
		sr.setSigner(who)
		// 6. The statement signed must be exactly the one this bundle
		// gives: _type, predicate type, every subject digest, predicate.
		if err := checkStatement(sb.payload, want); err != nil {
			sr.Reason = "statement: " + err.Error()
			res.Signatures = append(res.Signatures, sr)
			if stmtErr == nil {
				stmtErr = res.fail(CheckStatement, in.source, err)
			}
			continue
		}
		sr.Verified = true
		verifiedBy[idx] = true
		res.Signatures = append(res.Signatures, sr)
	}
	var missing []string
	for i, s := range signers {
		if !verifiedBy[i] {
			missing = append(missing, s.String())
		}
	}
	if stmtErr != nil {
		res.fail(CheckSignature, string(b.RunDescriptor().Digest), errors.New("a signature by a trusted signer is over a different statement"))
		return stmtErr
	}
	if len(missing) > 0 {
		reasons := []string{}
		for _, s := range res.Signatures {
			if !s.Verified && s.Reason != "" {
				reasons = append(reasons, s.Source+": "+s.Reason)
			}
		}
		err := fmt.Errorf("no valid signature over run manifest %s by %s", b.RunDescriptor().Digest, strings.Join(missing, ", "))
		if len(reasons) > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.Join(reasons, "; "))
		}
		if hint := v.reviewerHint(b, signers, verifiedBy, digestBytes); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
		res.skip(CheckStatement, "no signature by a trusted signer")
		return res.fail(CheckSignature, string(b.RunDescriptor().Digest), err)
	}
	res.Authenticated = true
	res.pass(CheckSignature, fmt.Sprintf("signed over %s by every trusted signer (%d of %d signatures verified)", b.RunDescriptor().Digest, len(verifiedBy), len(inputs)))
	res.pass(CheckStatement, fmt.Sprintf("in-toto Statement v1, predicate %s, %d subjects, predicate equals the bundle's", artifact.PredicateTypeRun, len(b.Layers())+1))
	return nil
}

// listStale lists each signature over another run manifest than the
// bundle's with what happened: it covers nothing here, and the checks
// that follow still run. With no other signature (none) it fails the
// signature check with that reason.
func listStale(b *artifact.Bundle, res *Result, none bool) *CheckError {
	stale := b.StaleReferrers()
	for _, r := range stale {
		_, _, cause := artifactErr(r.Stale)
		res.Signatures = append(res.Signatures, SignatureResult{Source: "referrer " + string(r.Descriptor.Digest), Reason: cause.Error()})
	}
	if !none || len(stale) == 0 {
		return nil
	}
	_, _, cause := artifactErr(stale[0].Stale)
	res.skip(CheckStatement, "no signature over this run manifest")
	return res.fail(CheckSignature, string(b.RunDescriptor().Digest), fmt.Errorf("no valid signature: referrer %s %w", stale[0].Descriptor.Digest, cause))
}

// verifyAny verifies a parsed Sigstore bundle against each signer in turn
// and returns the first that verifies it, with its index; otherwise the
// reason of the last attempt.
func (v *Verifier) verifyAny(sb *sigstoreBundle, signers []Signer, digest []byte) (*signedBy, int, error) {
	if len(signers) == 0 {
		return nil, -1, errors.New("no trusted signer given")
	}
	var lastErr error
	for i, s := range signers {
		who, err := v.verifyBy(sb, s, "sha256", digest)
		if err == nil {
			return who, i, nil
		}
		lastErr = err
	}
	if len(signers) == 1 {
		return nil, -1, lastErr
	}
	return nil, -1, fmt.Errorf("not verified by any trusted signer: %w", lastErr)
}

func checkStatement(payload, want []byte) error {
	st, err := artifact.ParseStatement(payload)
	if err != nil {
		// %v: the publisher's payload failing to decode is a statement
		// failure, not schema.ErrInvalid (an invalid run), which the
		// decoder's DecodeError also is.
		return fmt.Errorf("parse: %v", err)
	}
	if st.Type != artifact.StatementTypeV1 {
		return fmt.Errorf("_type %q, want %q", st.Type, artifact.StatementTypeV1)
	}
	if st.PredicateType != artifact.PredicateTypeRun {
		return fmt.Errorf("predicate type %q, want %q", st.PredicateType, artifact.PredicateTypeRun)
	}
	ws, _ := artifact.ParseStatement(want)
	if len(st.Subject) != len(ws.Subject) {
		return fmt.Errorf("%d subjects, the bundle has %d", len(st.Subject), len(ws.Subject))
	}
	for i := range st.Subject {
		g, w := st.Subject[i], ws.Subject[i]
		if g.Name != w.Name || len(g.Digest) != 1 || g.Digest["sha256"] != w.Digest["sha256"] {
			return fmt.Errorf("subject %d (%s) does not match the bundle's %s sha256:%s", i, g.Name, w.Name, w.Digest["sha256"])
		}
	}
	got, err := artifact.MarshalStatement(st)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("predicate differs from the one the bundle gives")
	}
	return nil
}

// reviewerHint names the trusted signers that did not sign the run but
// did sign a reviewer attestation on it: they were given as publishers
// (--key) where they belong among the required reviewers.
func (v *Verifier) reviewerHint(b *artifact.Bundle, signers []Signer, verifiedBy map[int]bool, digest []byte) string {
	var names []string
	for i, s := range signers {
		if verifiedBy[i] {
			continue
		}
		for _, r := range b.ReferrersOf(artifact.PredicateTypeVSA) {
			data, err := b.ReadSignature(r)
			if err != nil {
				continue
			}
			_, sb, _, err := readAttestation("", data)
			if err != nil {
				continue
			}
			if _, _, err := v.verifyAny(sb, []Signer{s}, digest); err == nil {
				names = append(names, s.String())
				break
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%s signed a reviewer attestation on this run, not the run itself: give a reviewer's key with --require-attestation, not --key", strings.Join(names, ", "))
}
