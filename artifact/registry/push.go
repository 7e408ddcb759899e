package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/errcond"
)

// PushResult describes a pushed bundle.
type PushResult struct {
	// Reference is the reference pushed to.
	Reference string
	// ManifestDigest and ManifestSize identify the run manifest.
	ManifestDigest digest.Digest
	ManifestSize   int64
	// Referrers are the signature referrer manifests pushed, in the
	// bundle's index order.
	Referrers []digest.Digest
	// Reproductions are the run manifests of the reproduction referrers
	// pushed: each is also pushed as a manifest of its own, so pulling
	// repository@<that digest> gives the reproduction as a bundle.
	Reproductions []digest.Digest
	// Uploaded and Present count the blobs uploaded and those the
	// registry already had.
	Uploaded, Present int
}

// Push uploads the bundle at path (a directory or a tar) to ref,
// host[:port]/repository:tag (or @sha256:<digest>, which must be the run
// manifest's digest). The bundle is opened with artifact.Open and every
// blob is digest-checked while it is uploaded. Order: the run manifest's
// blobs, the run manifest by digest, each signature referrer (its blobs,
// then its manifest, whose subject is the run manifest), and last the tag,
// then each reproduction referrer (its layers, its run manifest as a blob
// and as a manifest, then the referrer manifest), and last the tag, so a
// client resolving the tag finds the referrers already there.
// Pushing again is idempotent; new signatures are added.
func Push(ctx context.Context, path, ref string, opts Options) (*PushResult, error) {
	ctx, cancel := opts.withTimeout(ctx, "push "+ref)
	defer cancel()
	res, err := push(ctx, path, ref, opts)
	if err != nil {
		return nil, opts.timeoutError(ctx, err)
	}
	return res, nil
}

// push is Push under the context its overall timeout bounds.
func push(ctx context.Context, path, ref string, opts Options) (*PushResult, error) {
	r, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	b, err := artifact.Open(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	runDesc := b.RunDescriptor()
	if d, err := r.Digest(); err == nil && d != runDesc.Digest {
		return nil, errcond.Errorf(ErrReference, "invalid registry reference %q: the bundle's run manifest is %s", ref, runDesc.Digest)
	}
	repo, err := newRepository(r, opts)
	if err != nil {
		return nil, err
	}
	res := &PushResult{Reference: ref, ManifestDigest: runDesc.Digest, ManifestSize: runDesc.Size}
	count := func(uploaded bool, err error) error {
		if err != nil {
			return err
		}
		if uploaded {
			res.Uploaded++
		} else {
			res.Present++
		}
		return nil
	}
	cfg, cfgBytes := artifact.EmptyConfig()
	if err := count(pushBlob(ctx, repo, cfg, bytesOpener(cfgBytes))); err != nil {
		return nil, err
	}
	seen := map[digest.Digest]bool{cfg.Digest: true}
	for _, l := range b.Layers() {
		if seen[l.Descriptor.Digest] {
			continue
		}
		seen[l.Descriptor.Digest] = true
		if err := count(pushBlob(ctx, repo, l.Descriptor, func() (io.ReadCloser, error) { return b.OpenBlob(l) })); err != nil {
			return nil, err
		}
	}
	mb := b.RunManifestBytes()
	md := manifestDescriptor(runDesc.Digest, runDesc.Size)
	if err := repo.Push(ctx, md, bytes.NewReader(mb)); err != nil {
		return nil, fmt.Errorf("push run manifest %s: %w", md.Digest, err)
	}
	for _, rf := range b.Referrers() {
		sig, err := b.ReadSignature(rf)
		if err != nil {
			return nil, err
		}
		if err := count(pushBlob(ctx, repo, rf.Bundle, bytesOpener(sig))); err != nil {
			return nil, err
		}
		rb, err := b.ReadReferrerManifest(rf)
		if err != nil {
			return nil, err
		}
		rd := manifestDescriptor(rf.Descriptor.Digest, rf.Descriptor.Size)
		rd.ArtifactType = artifact.MediaTypeSigstoreBundle
		if err := repo.Push(ctx, rd, bytes.NewReader(rb)); err != nil {
			return nil, fmt.Errorf("push signature referrer %s: %w", rd.Digest, err)
		}
		res.Referrers = append(res.Referrers, rd.Digest)
	}
	for _, rp := range b.Reproductions() {
		if err := pushReproduction(ctx, repo, b, rp, count); err != nil {
			return nil, err
		}
		res.Reproductions = append(res.Reproductions, rp.RunDescriptor.Digest)
	}
	if _, err := r.Digest(); err != nil { // a tag
		if err := repo.PushReference(ctx, md, bytes.NewReader(mb), r.Reference); err != nil {
			return nil, fmt.Errorf("tag %s as %s: %w", md.Digest, r.Reference, err)
		}
	}
	return res, nil
}

// pushReproduction uploads a reproduction referrer: the reproduction's
// layers, its run manifest as the referrer's first layer (a blob) and as
// a manifest of its own, then the referrer manifest.
func pushReproduction(ctx context.Context, repo *remote.Repository, b *artifact.Bundle, rp artifact.Reproduction, count func(bool, error) error) error {
	for _, l := range rp.Layers {
		if err := count(pushBlob(ctx, repo, l.Descriptor, func() (io.ReadCloser, error) { return b.OpenBlob(l) })); err != nil {
			return err
		}
	}
	rb := rp.ReproductionRunBytes()
	ld := ocispec.Descriptor{MediaType: artifact.MediaTypeReproductionRun, Digest: rp.RunDescriptor.Digest, Size: rp.RunDescriptor.Size}
	ok, err := repo.Blobs().Exists(ctx, ld)
	if err != nil {
		return fmt.Errorf("check blob %s: %w", ld.Digest, err)
	}
	if !ok {
		if err := repo.Blobs().Push(ctx, ld, bytes.NewReader(rb)); err != nil {
			return fmt.Errorf("push reproduction run manifest blob %s: %w", ld.Digest, err)
		}
	}
	if err := repo.Manifests().Push(ctx, manifestDescriptor(ld.Digest, ld.Size), bytes.NewReader(rb)); err != nil {
		return fmt.Errorf("push reproduction run manifest %s: %w", ld.Digest, err)
	}
	mb, err := b.ReadReproductionManifest(rp)
	if err != nil {
		return err
	}
	rd := manifestDescriptor(rp.Descriptor.Digest, rp.Descriptor.Size)
	rd.ArtifactType = artifact.ArtifactTypeReproduction
	if err := repo.Push(ctx, rd, bytes.NewReader(mb)); err != nil {
		return fmt.Errorf("push reproduction referrer %s: %w", rd.Digest, err)
	}
	return nil
}
