package artifact

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// Predicate types of the other Sigstore bundles a bundle can carry as
// referrers of its run manifest, next to the publisher's signatures
// (PredicateTypeRun).
const (
	// PredicateTypeVSA is the SLSA Verification Summary Attestation v1 a
	// reviewer signs after verifying and recomputing a bundle.
	PredicateTypeVSA = "https://slsa.dev/verification_summary/v1"
	// PredicateTypePlan is the statement a publisher signs over a
	// pre-registered test plan (subject: the plan's canonical digest;
	// predicate: the plan itself).
	PredicateTypePlan = plan.PredicateType
)

// PredicateType returns the predicate type the referrer manifest's
// dev.sigstore.bundle.predicateType annotation declares. It is an
// unauthenticated label that sorts referrers into publisher signatures,
// reviewer attestations and plans; every verifier still checks the signed
// statement's own predicate type. A referrer without the annotation counts
// as a publisher signature.
func (r Referrer) PredicateType() string {
	if t := r.Manifest.Annotations[AnnotationBundlePredicateType]; t != "" {
		return t
	}
	return PredicateTypeRun
}

// ReferrersOf returns the referrers whose declared predicate type is
// predicateType, in index order.
func (b *Bundle) ReferrersOf(predicateType string) []Referrer {
	var out []Referrer
	for _, r := range b.referrers {
		if r.PredicateType() == predicateType {
			out = append(out, r)
		}
	}
	return out
}

// Attach adds an already made Sigstore bundle sb as a new referrer of the
// bundle's run manifest, labelled with predicateType, after checking every
// blob of the bundle at path. The caller is responsible for having checked
// what sb signs (verify does so again every time). It is atomic like Sign
// and keeps every earlier referrer; attaching the same bytes twice is a
// no-op that returns the existing referrer.
func Attach(ctx context.Context, path string, sb []byte, predicateType string) (ocispec.Descriptor, error) {
	if int64(len(sb)) > MaxSignatureBundleSize {
		return ocispec.Descriptor{}, fmt.Errorf("attach: Sigstore bundle of %d bytes over the limit %d", len(sb), MaxSignatureBundleSize)
	}
	if err := schema.CheckJSON(sb); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("attach: Sigstore bundle: %w", err)
	}
	path = filepath.Clean(path)
	if _, err := schema.ReclaimStale(path); err != nil {
		return ocispec.Descriptor{}, err
	}
	unlock, err := schema.LockPath(path)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("attach to %s: %w", path, err)
	}
	defer unlock()
	b, err := Open(path)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	defer b.Close()
	if err := b.CheckContent(ctx); err != nil {
		return ocispec.Descriptor{}, err
	}
	add, ib, rd, err := b.referrerBlobs(sb, predicateType)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	for _, r := range b.referrers {
		if r.Descriptor.Digest == rd.Digest {
			return rd, nil
		}
	}
	if err := b.commit(ctx, path, add, ib); err != nil {
		return ocispec.Descriptor{}, err
	}
	return rd, nil
}

// referrerBlobs makes the blobs of a new Sigstore bundle referrer of the
// run manifest (the shape cosign uses) holding sb, and the new index.json
// listing it beside the earlier referrers and the reproduction referrers.
func (b *Bundle) referrerBlobs(sb []byte, predicateType string) (map[string][]byte, []byte, ocispec.Descriptor, error) {
	bd := DigestBytes(sb)
	ref := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: MediaTypeSigstoreBundle,
		Config:       emptyDescriptor(),
		Layers:       []ocispec.Descriptor{{MediaType: MediaTypeSigstoreBundle, Digest: bd, Size: int64(len(sb))}},
		Subject:      &ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: b.runDesc.Digest, Size: b.runDesc.Size},
		Annotations: map[string]string{
			AnnotationBundleContent:       "dsse-envelope",
			AnnotationBundlePredicateType: predicateType,
			AnnotationCreated:             b.created,
		},
	}
	rb, err := marshalDoc(ref)
	if err != nil {
		return nil, nil, ocispec.Descriptor{}, err
	}
	rd := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: MediaTypeSigstoreBundle, Digest: DigestBytes(rb), Size: int64(len(rb))}
	refs := []ocispec.Descriptor{rd}
	for _, r := range b.referrers {
		if r.Descriptor.Digest != rd.Digest {
			refs = append(refs, r.Descriptor)
		}
	}
	for _, r := range b.repros {
		refs = append(refs, r.Descriptor)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Digest < refs[j].Digest })
	ib, err := marshalIndex(b.runDesc, refs)
	if err != nil {
		return nil, nil, ocispec.Descriptor{}, err
	}
	add := map[string][]byte{
		blobPath(bd):        sb,
		blobPath(rd.Digest): rb,
	}
	return add, ib, rd, nil
}

func (b *Bundle) loadReferrer(d ocispec.Descriptor, used map[string]bool) (Referrer, error) {
	r := Referrer{Descriptor: d}
	name := string(d.Digest)
	mb, err := b.readBlob(d, MaxOCIManifestSize, CheckDescriptors)
	if err != nil {
		return r, err
	}
	used[blobPath(d.Digest)] = true
	r.Manifest, err = checkReferrerShape(mb, name, b.runDesc)
	if se := (*staleError)(nil); errors.As(err, &se) {
		r.Stale, err = err, nil
	}
	if err != nil {
		return r, err
	}
	m := &r.Manifest
	if err := b.checkEmptyConfig(m.Config, name, used); err != nil {
		return r, err
	}
	l := m.Layers[0]
	p := blobPath(l.Digest)
	sz, ok := b.src.size(p)
	if !ok {
		return r, invalid(CheckDescriptors, string(l.Digest), "signature blob missing")
	}
	if sz != l.Size {
		return r, invalid(CheckDescriptors, string(l.Digest), "size mismatch: blob is %d bytes, descriptor says %d", sz, l.Size)
	}
	used[p] = true
	r.Bundle = l
	return r, nil
}

// checkReferrerShape decodes a signature referrer manifest strictly and
// checks everything about it that does not need the other blobs: its
// fields, that its subject is the run manifest run, its annotations, the
// empty config descriptor and its single Sigstore bundle layer.
func checkReferrerShape(mb []byte, name string, run ocispec.Descriptor) (ocispec.Manifest, error) {
	var m ocispec.Manifest
	if err := decodeStrict(mb, &m); err != nil {
		return m, invalid(CheckSignature, name, "%v", err)
	}
	switch {
	case m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest:
		return m, invalid(CheckSignature, name, "not an image manifest v2")
	case m.ArtifactType != MediaTypeSigstoreBundle:
		return m, invalid(CheckSignature, name, "artifactType %q, want %q", m.ArtifactType, MediaTypeSigstoreBundle)
	case m.Subject == nil:
		return m, invalid(CheckSignature, name, "no subject")
	case len(m.Layers) != 1:
		return m, invalid(CheckSignature, name, "%d layers, want 1", len(m.Layers))
	}
	for k := range m.Annotations {
		switch k {
		case AnnotationBundleContent, AnnotationBundlePredicateType, AnnotationCreated:
		default:
			return m, invalid(CheckSignature, name, "unexpected annotation %q", k)
		}
	}
	if !isEmptyConfig(m.Config) {
		return m, invalid(CheckManifest, name, "config must be the empty descriptor")
	}
	l := m.Layers[0]
	if err := checkDescriptor(l, MaxSignatureBundleSize); err != nil {
		return m, invalid(CheckSignature, name, "%v", err)
	}
	if l.MediaType != MediaTypeSigstoreBundle {
		return m, invalid(CheckSignature, name, "layer media type %q, want %q", l.MediaType, MediaTypeSigstoreBundle)
	}
	if len(l.Annotations) > 0 || l.ArtifactType != "" {
		return m, invalid(CheckSignature, name, "unexpected layer annotations")
	}
	// Checked last: a referrer of the right shape over another run
	// manifest is a stale signature (Referrer.Stale), which leaves the
	// bundle readable so that every other check can still run.
	if m.Subject.Digest != run.Digest || m.Subject.Size != run.Size || m.Subject.MediaType != ocispec.MediaTypeImageManifest {
		return m, &Error{Check: CheckSignature, Blob: name, Err: &staleError{signed: m.Subject.Digest, run: run.Digest}}
	}
	return m, nil
}

// staleError is a signature referrer whose subject is another run
// manifest than the bundle's.
type staleError struct{ signed, run digest.Digest }

func (e *staleError) Error() string {
	return fmt.Sprintf("signs run manifest %s, but this bundle's run manifest is %s: the bundle was changed after it was signed (its digests recomputed), and the signature no longer covers it", e.signed, e.run)
}
