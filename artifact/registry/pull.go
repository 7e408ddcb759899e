package registry

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/benchseal/benchseal/artifact"
)

// PullResult describes a pulled bundle.
type PullResult struct {
	// Path is where the bundle was written.
	Path string
	// Reference is the reference pulled.
	Reference string
	// ManifestDigest and ManifestSize identify the run manifest.
	ManifestDigest digest.Digest
	ManifestSize   int64
	// RunID is the run's id (the index ref.name).
	RunID string
	// Layers counts the run manifest's layers.
	Layers int
	// Referrers are the signature referrers written, sorted by digest as
	// in index.json.
	Referrers []digest.Digest
	// Reproductions are the run manifests of the reproduction referrers
	// written, sorted.
	Reproductions []digest.Digest
	// Skipped lists referrers the registry listed that are not benchseal
	// signatures of this run manifest; they are not written.
	Skipped []SkippedReferrer
}

// SkippedReferrer is a listed referrer Pull did not write, and why.
type SkippedReferrer struct {
	Digest digest.Digest
	Reason string
}

// Pull fetches ref (host[:port]/repository:tag or @sha256:<digest>) into a
// new bundle at out: a directory, or a deterministic tar when out ends in
// ".tar". out must not exist. The written bundle has the same blobs, the
// same run manifest digest and the same index.json as the bundle pushed
// (with the signatures the registry lists), so it verifies the same way.
//
// What is checked: the resolved descriptor is an image manifest within
// artifact.MaxOCIManifestSize; the run manifest is parsed as strictly as
// artifact.Open parses it before any layer is fetched; every blob's size
// is checked against its limit before reading and its digest while it
// streams (a wrong digest, a short or long body is an *artifact.Error
// naming the blob, wrapping artifact.ErrInvalid); referrers are taken from
// the referrers API or the referrers tag schema, filtered on the Sigstore
// bundle artifactType, and each must parse as a benchseal signature whose
// subject is the run manifest (others are skipped and listed); at most
// artifact.MaxIndexEntries-1 signatures are accepted. Reproduction
// referrers (artifactType artifact.ArtifactTypeReproduction) are listed
// the same way; each must parse with artifact.ParseReproductionReferrer,
// its run manifest (within artifact.MaxOCIManifestSize) with
// artifact.CheckReproductionRun, and its layers are fetched under the
// same limits as the run's; at most artifact.MaxReproductions. Finally the staged
// layout is opened with artifact.Open and only then published (rename).
// Signatures are not verified: run verify on the result. A registry that
// does not answer in time (opts.ResponseHeaderTimeout, opts.Timeout) fails
// the pull with ErrTimeout.
func Pull(ctx context.Context, ref, out string, opts Options) (*PullResult, error) {
	ctx, cancel := opts.withTimeout(ctx, "pull "+ref)
	defer cancel()
	res, err := pull(ctx, ref, out, opts)
	if err != nil {
		return nil, opts.timeoutError(ctx, err)
	}
	return res, nil
}

// pull is Pull under the context its overall timeout bounds.
func pull(ctx context.Context, ref, out string, opts Options) (*PullResult, error) {
	r, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	repo, err := newRepository(r, opts)
	if err != nil {
		return nil, err
	}
	desc, err := repo.Resolve(ctx, r.Reference)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", ref, err)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, &artifact.Error{Check: artifact.CheckManifest, Blob: string(desc.Digest),
			Err: fmt.Errorf("%s resolves to media type %q, want %q", ref, desc.MediaType, ocispec.MediaTypeImageManifest)}
	}
	md := manifestDescriptor(desc.Digest, desc.Size)
	mb, err := fetchBytes(ctx, repo, md, artifact.MaxOCIManifestSize)
	if err != nil {
		return nil, err
	}
	man, layers, err := artifact.ParseRunManifest(mb, string(md.Digest))
	if err != nil {
		return nil, err
	}
	w, err := artifact.NewLayoutWriter(out)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", out, err)
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	res := &PullResult{Path: out, Reference: ref, ManifestDigest: md.Digest, ManifestSize: md.Size,
		RunID: man.Annotations[artifact.AnnotationRunID], Layers: len(layers)}

	if err := w.WriteBlob(bytes.NewReader(mb), md, artifact.MaxOCIManifestSize); err != nil {
		return nil, err
	}
	if err := fetchBlob(ctx, repo, w, man.Config, 2); err != nil {
		return nil, err
	}
	for _, l := range layers {
		if err := fetchBlob(ctx, repo, w, l.Descriptor, artifact.MaxBlobSize); err != nil {
			return nil, err
		}
	}

	refs, err := pullReferrers(ctx, repo, w, md, res)
	if err != nil {
		return nil, err
	}
	repros, err := pullReproductions(ctx, repo, w, md, res)
	if err != nil {
		return nil, err
	}
	refs = append(refs, repros...)
	committed = true
	if err := w.Commit(md, res.RunID, refs); err != nil {
		return nil, fmt.Errorf("pull %s: %w", out, err)
	}
	return res, nil
}

// fetchBlob streams one blob from the registry into the layout, unless it
// is already there.
func fetchBlob(ctx context.Context, repo *remote.Repository, w *artifact.LayoutWriter, d ocispec.Descriptor, limit int64) error {
	if w.Has(d.Digest) {
		return nil
	}
	if err := artifact.ValidateDescriptor(d, limit); err != nil {
		return &artifact.Error{Check: artifact.CheckDescriptors, Blob: string(d.Digest), Err: err}
	}
	rc, err := repo.Fetch(ctx, d)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", d.Digest, err)
	}
	defer rc.Close()
	return w.WriteBlob(rc, d, limit)
}

// listReferrers lists the referrers of md of artifactType, each digest
// once, and fails once more than limit are listed (what names them in
// that error, listWhat in a listing error): a registry's listing is
// bounded before anything is fetched.
func listReferrers(ctx context.Context, repo *remote.Repository, md ocispec.Descriptor, artifactType string, limit int, what, listWhat string) ([]ocispec.Descriptor, error) {
	var listed []ocispec.Descriptor
	seen := map[digest.Digest]bool{}
	err := repo.Referrers(ctx, md, artifactType, func(page []ocispec.Descriptor) error {
		for _, d := range page {
			if seen[d.Digest] {
				continue
			}
			seen[d.Digest] = true
			listed = append(listed, d)
			if len(listed) > limit {
				return fmt.Errorf("more than %d %s listed", limit, what)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", listWhat, md.Digest, err)
	}
	return listed, nil
}

// pullReferrers lists the Sigstore-bundle referrers of the run manifest md
// and writes each that is a benchseal signature of it. It returns their
// descriptors.
func pullReferrers(ctx context.Context, repo *remote.Repository, w *artifact.LayoutWriter, md ocispec.Descriptor, res *PullResult) ([]ocispec.Descriptor, error) {
	listed, err := listReferrers(ctx, repo, md, artifact.MediaTypeSigstoreBundle, 4*artifact.MaxIndexEntries, "signature referrers", "referrers")
	if err != nil {
		return nil, err
	}
	var refs []ocispec.Descriptor
	for _, d := range listed {
		skip := func(format string, args ...any) {
			res.Skipped = append(res.Skipped, SkippedReferrer{Digest: d.Digest, Reason: fmt.Sprintf(format, args...)})
		}
		if d.ArtifactType == artifact.ArtifactTypeReproduction {
			continue // a registry that ignored the filter: pullReproductions takes it
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			skip("media type %q is not an image manifest", d.MediaType)
			continue
		}
		if err := artifact.ValidateDescriptor(d, artifact.MaxOCIManifestSize); err != nil {
			skip("%v", err)
			continue
		}
		rd := manifestDescriptor(d.Digest, d.Size)
		rb, err := fetchBytes(ctx, repo, rd, artifact.MaxOCIManifestSize)
		if err != nil {
			return nil, err
		}
		rm, err := artifact.ParseReferrerManifest(rb, string(d.Digest), md)
		if err != nil {
			skip("%v", err)
			continue
		}
		if len(refs)+1 >= artifact.MaxIndexEntries {
			return nil, fmt.Errorf("more than %d signatures of %s", artifact.MaxIndexEntries-1, md.Digest)
		}
		if err := fetchBlob(ctx, repo, w, rm.Config, 2); err != nil {
			return nil, err
		}
		if err := fetchBlob(ctx, repo, w, rm.Layers[0], artifact.MaxSignatureBundleSize); err != nil {
			return nil, err
		}
		if err := w.WriteBlob(bytes.NewReader(rb), rd, artifact.MaxOCIManifestSize); err != nil {
			return nil, err
		}
		refs = append(refs, rd)
		res.Referrers = append(res.Referrers, rd.Digest)
	}
	slices.Sort(res.Referrers)
	return refs, nil
}

// pullReproductions lists the reproduction referrers of the run manifest
// md and writes each that is of the right shape (others are skipped and
// listed; a blob whose digest or size is wrong fails the pull). It
// returns their descriptors.
func pullReproductions(ctx context.Context, repo *remote.Repository, w *artifact.LayoutWriter, md ocispec.Descriptor, res *PullResult) ([]ocispec.Descriptor, error) {
	listed, err := listReferrers(ctx, repo, md, artifact.ArtifactTypeReproduction, 4*artifact.MaxReproductions, "reproduction referrers", "reproduction referrers")
	if err != nil {
		return nil, err
	}
	var refs []ocispec.Descriptor
	for _, d := range listed {
		skip := func(format string, args ...any) {
			res.Skipped = append(res.Skipped, SkippedReferrer{Digest: d.Digest, Reason: fmt.Sprintf(format, args...)})
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			skip("media type %q is not an image manifest", d.MediaType)
			continue
		}
		if err := artifact.ValidateDescriptor(d, artifact.MaxOCIManifestSize); err != nil {
			skip("%v", err)
			continue
		}
		rd := manifestDescriptor(d.Digest, d.Size)
		rb, err := fetchBytes(ctx, repo, rd, artifact.MaxOCIManifestSize)
		if err != nil {
			return nil, err
		}
		rm, err := artifact.ParseReproductionReferrer(rb, string(d.Digest), md)
		if err != nil {
			skip("%v", err)
			continue
		}
		if len(refs) == artifact.MaxReproductions {
			return nil, fmt.Errorf("more than %d reproductions of %s", artifact.MaxReproductions, md.Digest)
		}
		runBytes, err := fetchReproductionRun(ctx, repo, rm.Layers[0])
		if err != nil {
			return nil, err
		}
		run, layers, err := artifact.CheckReproductionRun(rm, runBytes, string(d.Digest))
		if err != nil {
			return nil, err
		}
		if err := fetchBlob(ctx, repo, w, run.Config, 2); err != nil {
			return nil, err
		}
		if err := w.WriteBlob(bytes.NewReader(runBytes), rm.Layers[0], artifact.MaxOCIManifestSize); err != nil {
			return nil, err
		}
		for _, l := range layers {
			if err := fetchBlob(ctx, repo, w, l.Descriptor, artifact.MaxBlobSize); err != nil {
				return nil, err
			}
		}
		if err := w.WriteBlob(bytes.NewReader(rb), rd, artifact.MaxOCIManifestSize); err != nil {
			return nil, err
		}
		rd.ArtifactType = artifact.ArtifactTypeReproduction
		refs = append(refs, rd)
		res.Reproductions = append(res.Reproductions, rm.Layers[0].Digest)
	}
	slices.Sort(res.Reproductions)
	return refs, nil
}

// fetchReproductionRun fetches a reproduction referrer's first layer, the
// reproduction's run manifest, from the blob store (the layer's media
// type is a manifest's, which would otherwise route it to the manifest
// store), size-limited and digest-checked.
func fetchReproductionRun(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor) ([]byte, error) {
	if err := artifact.ValidateDescriptor(d, artifact.MaxOCIManifestSize); err != nil {
		return nil, &artifact.Error{Check: artifact.CheckDescriptors, Blob: string(d.Digest), Err: err}
	}
	rc, err := repo.Blobs().Fetch(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", d.Digest, err)
	}
	defer rc.Close()
	return artifact.ReadVerified(rc, d, artifact.MaxOCIManifestSize)
}
