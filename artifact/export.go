package artifact

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// This file exports what artifact/registry needs to move a bundle to and
// from a registry with the same checks and the same writer as Pack and
// Sign.

// RunManifestBytes returns the run manifest exactly as stored (its digest
// was recomputed by Open).
func (b *Bundle) RunManifestBytes() []byte { return bytes.Clone(b.runBytes) }

// ReadReferrerManifest returns the referrer manifest of r exactly as
// stored, digest verified.
func (b *Bundle) ReadReferrerManifest(r Referrer) ([]byte, error) {
	return b.readBlob(r.Descriptor, MaxOCIManifestSize, CheckDescriptors)
}

// EmptyConfig returns the empty config blob ("{}") every benchseal
// manifest uses, and its descriptor.
func EmptyConfig() (ocispec.Descriptor, []byte) {
	return emptyDescriptor(), []byte("{}")
}

// ValidateDescriptor checks a descriptor from an untrusted source: a media
// type, a sha256 digest in lowercase hex, a size in [0, maxSize], and no
// urls, platform or data.
func ValidateDescriptor(d ocispec.Descriptor, maxSize int64) error {
	return checkDescriptor(d, maxSize)
}

// ParseRunManifest decodes a run manifest strictly and checks everything
// Open checks about it that does not need other blobs: the fields, the
// annotations, the empty config descriptor, and every layer descriptor
// (sha256, size limits, known media types, order, titles). name names the
// manifest in errors, which are *Error values wrapping ErrInvalid. It
// returns the manifest and its layers in order.
func ParseRunManifest(mb []byte, name string) (ocispec.Manifest, []Layer, error) {
	if int64(len(mb)) > MaxOCIManifestSize {
		return ocispec.Manifest{}, nil, invalid(CheckManifest, name, "size %d over the limit %d", len(mb), MaxOCIManifestSize)
	}
	return checkRunShape(mb, name)
}

// ParseReferrerManifest decodes a signature referrer manifest strictly and
// checks everything Open checks about it that does not need other blobs:
// artifactType, subject (it must be run), annotations, empty config and a
// single Sigstore bundle layer within MaxSignatureBundleSize.
func ParseReferrerManifest(mb []byte, name string, run ocispec.Descriptor) (ocispec.Manifest, error) {
	if int64(len(mb)) > MaxOCIManifestSize {
		return ocispec.Manifest{}, invalid(CheckSignature, name, "size %d over the limit %d", len(mb), MaxOCIManifestSize)
	}
	return checkReferrerShape(mb, name, run)
}

// ReadVerified reads exactly d.Size bytes from r, at most limit, checking
// the sha256 digest as the bytes stream; more or fewer bytes, or another
// digest, is an *Error naming the digest. d.Size is checked against limit
// before anything is read or allocated.
func ReadVerified(r io.Reader, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if err := checkDescriptor(d, limit); err != nil {
		return nil, invalid(CheckDescriptors, string(d.Digest), "%v", err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, d.Size))
	if _, err := io.Copy(buf, newVerifyingReader(r, d.Digest, d.Size, CheckDescriptors, string(d.Digest), describe(d))); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LayoutWriter builds a bundle from blobs obtained elsewhere (a registry)
// with the writer Pack and Sign use: blobs are staged in a temporary
// directory beside the destination, verified while they stream, and the
// finished layout is checked with Open before it is published atomically
// (rename) as a directory or a deterministic tar. Nothing is left at the
// destination on failure.
type LayoutWriter struct {
	out   string
	st    *stage
	blobs map[digest.Digest]bool
}

// NewLayoutWriter starts a bundle to be published at out (a directory, or
// a tar when out ends in ".tar"). out must not exist. Call Abort when not
// committing.
func NewLayoutWriter(out string) (*LayoutWriter, error) {
	if _, err := os.Lstat(out); err == nil {
		return nil, fmt.Errorf("%s already exists (refusing to overwrite)", out)
	}
	st, err := newStage(out)
	if err != nil {
		return nil, err
	}
	return &LayoutWriter{out: out, st: st, blobs: map[digest.Digest]bool{}}, nil
}

// Has reports whether the blob d was already written.
func (w *LayoutWriter) Has(d digest.Digest) bool { return w.blobs[d] }

// WriteBlob stores the blob d read from r. d is checked with
// CheckDescriptors(d, limit) before reading; while streaming, r must give
// exactly d.Size bytes with digest d.Digest, else the blob is discarded and
// the error (an *Error naming the digest) returned.
func (w *LayoutWriter) WriteBlob(r io.Reader, d ocispec.Descriptor, limit int64) error {
	if err := checkDescriptor(d, limit); err != nil {
		return invalid(CheckDescriptors, string(d.Digest), "%v", err)
	}
	if w.blobs[d.Digest] {
		return nil
	}
	bw, err := w.st.newBlob()
	if err != nil {
		return err
	}
	if _, err := io.Copy(bw, newVerifyingReader(r, d.Digest, d.Size, CheckDescriptors, string(d.Digest), describe(d))); err != nil {
		bw.abort()
		return err
	}
	got, _, err := bw.commit()
	if err != nil {
		return err
	}
	if got != d.Digest { // cannot happen: the verifying reader checked it
		return invalid(CheckDescriptors, string(d.Digest), "digest mismatch in %s: expected %s, content is %s", describe(d), d.Digest, got)
	}
	w.blobs[d.Digest] = true
	return nil
}

// Commit writes oci-layout and index.json exactly as Pack and Sign do —
// the run manifest (ref.name = runID) first, then the referrers sorted by
// digest — checks the staged layout with Open, and publishes it at out: a
// directory by rename, or a deterministic tar (mtime = the bundle's
// created time) written to a temporary file and renamed. Only the digest
// and size of run and referrers are used, and of each referrer whether
// its artifactType is ArtifactTypeReproduction (else it is a signature). On error nothing is left at out.
func (w *LayoutWriter) Commit(run ocispec.Descriptor, runID string, referrers []ocispec.Descriptor) error {
	runDesc := ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeRun,
		Digest:       run.Digest,
		Size:         run.Size,
		Annotations:  map[string]string{AnnotationRefName: runID},
	}
	refs := make([]ocispec.Descriptor, 0, len(referrers))
	for _, r := range referrers {
		at := MediaTypeSigstoreBundle
		if r.ArtifactType == ArtifactTypeReproduction {
			at = ArtifactTypeReproduction
		}
		refs = append(refs, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: at, Digest: r.Digest, Size: r.Size})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Digest < refs[j].Digest })
	ib, err := marshalIndex(runDesc, refs)
	if err != nil {
		w.Abort()
		return err
	}
	if err := w.st.finishLayout(ib); err != nil {
		w.Abort()
		return err
	}
	b, err := Open(w.st.dir)
	if err != nil {
		w.Abort()
		return err
	}
	created := b.Created()
	b.Close()
	mt, err := parseCreated(created)
	if err != nil {
		w.Abort()
		return err
	}
	return w.st.publish(w.out, mt)
}

// Abort removes everything staged.
func (w *LayoutWriter) Abort() { w.st.discard() }
