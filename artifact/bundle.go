package artifact

import (
	"bytes"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/benchseal/benchseal/schema"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Bundle is an opened bundle. Open has checked its structure — container,
// oci-layout, index.json, the run manifest and signature referrer
// manifests (sizes and digests), the layer descriptors, and the manifest
// and claims documents — but not the signatures, and not the content of the
// other layers, which is checked while it streams. A Bundle implements
// schema.Run.
type Bundle struct {
	path      string
	src       source
	index     ocispec.Index
	runDesc   ocispec.Descriptor
	run       ocispec.Manifest
	runBytes  []byte
	layers    []Layer
	referrers []Referrer
	stale     []Referrer
	repros    []Reproduction
	manifest  *schema.Manifest
	claims    *schema.Claims
	created   string
	read      atomic.Int64
}

var _ schema.Run = (*Bundle)(nil)

// Referrer is one signature referrer: an OCI manifest whose subject is the
// run manifest and whose single layer is a Sigstore bundle.
type Referrer struct {
	// Descriptor is the referrer manifest's descriptor in index.json.
	Descriptor ocispec.Descriptor
	Manifest   ocispec.Manifest
	// Bundle is the descriptor of the Sigstore bundle layer.
	Bundle ocispec.Descriptor
	// Stale, when set, says the referrer signs another run manifest than
	// the bundle's (the bundle changed after it was signed): such a
	// referrer is listed by StaleReferrers, never by Referrers.
	Stale error
}

// Open opens the bundle at path, a layout directory or a tar file, and
// checks its structure. Every error about the content is an *Error naming
// the check and the blob; all wrap ErrInvalid. Close the bundle when done.
func Open(path string) (*Bundle, error) {
	src, err := openSource(path)
	if err != nil {
		return nil, err
	}
	b := &Bundle{path: path}
	b.src = countingSource{source: src, n: &b.read}
	if err := b.load(); err != nil {
		src.close()
		return nil, err
	}
	return b, nil
}

// BytesRead returns how many bytes have been read from the bundle's files
// so far, by Open and every stream since: what reading each stored blob
// once costs is the sum of their sizes.
func (b *Bundle) BytesRead() int64 { return b.read.Load() }

// countingSource adds the bytes read through it to n.
type countingSource struct {
	source
	n *atomic.Int64
}

func (c countingSource) open(name string) (io.ReadCloser, error) {
	rc, err := c.source.open(name)
	if err != nil {
		return nil, err
	}
	return &readCounter{rc, c.n}, nil
}

type readCounter struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Close releases the files of the bundle.
func (b *Bundle) Close() error { return b.src.close() }

// Path returns the path the bundle was opened from.
func (b *Bundle) Path() string { return b.path }

// Manifest returns the run's manifest (schema.Run).
func (b *Bundle) Manifest() *schema.Manifest { return b.manifest }

// Claims returns the run's claims, or nil (schema.Run).
func (b *Bundle) Claims() *schema.Claims { return b.claims }

// RunDescriptor returns the descriptor of the run manifest as listed in
// index.json (its digest was recomputed by Open).
func (b *Bundle) RunDescriptor() ocispec.Descriptor { return b.runDesc }

// RunManifest returns the decoded run manifest.
func (b *Bundle) RunManifest() ocispec.Manifest { return b.run }

// Layers returns the run's layers in manifest order.
func (b *Bundle) Layers() []Layer { return b.layers }

// Referrers returns the signature referrers in index order.
func (b *Bundle) Referrers() []Referrer { return b.referrers }

// StaleReferrers returns the signature referrers over another run
// manifest than the bundle's (each with its Stale reason), in index
// order: signatures the bundle no longer matches, which verify reports.
func (b *Bundle) StaleReferrers() []Referrer { return b.stale }

// Created returns the org.opencontainers.image.created annotation.
func (b *Bundle) Created() string { return b.created }

// Index returns the decoded index.json.
func (b *Bundle) Index() ocispec.Index { return b.index }

func (b *Bundle) load() error {
	lb, err := readAllLimited(b.src, ocispec.ImageLayoutFile, MaxLayoutFileSize, CheckLayout)
	if err != nil {
		return err
	}
	var lay ocispec.ImageLayout
	if err := decodeStrict(lb, &lay); err != nil {
		return invalid(CheckLayout, ocispec.ImageLayoutFile, "%v", err)
	}
	if lay.Version != ocispec.ImageLayoutVersion {
		return invalid(CheckLayout, ocispec.ImageLayoutFile, "imageLayoutVersion %q, want %q", lay.Version, ocispec.ImageLayoutVersion)
	}
	ib, err := readAllLimited(b.src, ocispec.ImageIndexFile, MaxIndexSize, CheckLayout)
	if err != nil {
		return err
	}
	if err := decodeStrict(ib, &b.index); err != nil {
		return invalid(CheckLayout, ocispec.ImageIndexFile, "%v", err)
	}
	idx := &b.index
	switch {
	case idx.SchemaVersion != 2:
		return invalid(CheckLayout, ocispec.ImageIndexFile, "schemaVersion %d, want 2", idx.SchemaVersion)
	case idx.MediaType != ocispec.MediaTypeImageIndex:
		return invalid(CheckLayout, ocispec.ImageIndexFile, "mediaType %q, want %q", idx.MediaType, ocispec.MediaTypeImageIndex)
	case idx.Subject != nil || idx.ArtifactType != "" || len(idx.Annotations) > 0:
		return invalid(CheckLayout, ocispec.ImageIndexFile, "unexpected subject, artifactType or annotations")
	case len(idx.Manifests) == 0:
		return invalid(CheckLayout, ocispec.ImageIndexFile, "no manifests")
	case len(idx.Manifests) > MaxIndexEntries:
		return invalid(CheckLayout, ocispec.ImageIndexFile, "%d manifests, over the limit %d", len(idx.Manifests), MaxIndexEntries)
	}
	used := map[string]bool{ocispec.ImageLayoutFile: true, ocispec.ImageIndexFile: true}
	runs, refDescs, reproDescs, err := b.sortIndex()
	if err != nil {
		return err
	}
	if runs != 1 {
		return invalid(CheckLayout, ocispec.ImageIndexFile, "%d run manifests, want exactly 1", runs)
	}
	if len(b.runDesc.Annotations) != 1 || b.runDesc.Annotations[AnnotationRefName] == "" {
		return invalid(CheckLayout, ocispec.ImageIndexFile, "run manifest entry must carry exactly the %s annotation", AnnotationRefName)
	}

	// The run manifest.
	b.runBytes, err = b.readBlob(b.runDesc, MaxOCIManifestSize, CheckDescriptors)
	if err != nil {
		return err
	}
	used[blobPath(b.runDesc.Digest)] = true
	if err := b.checkRunManifest(used); err != nil {
		return err
	}
	for _, d := range refDescs {
		r, err := b.loadReferrer(d, used)
		if err != nil {
			return err
		}
		if r.Stale != nil {
			b.stale = append(b.stale, r)
			continue
		}
		b.referrers = append(b.referrers, r)
	}
	for _, d := range reproDescs {
		r, err := b.loadReproduction(d, used)
		if err != nil {
			return err
		}
		b.repros = append(b.repros, r)
	}
	for _, n := range b.src.names() {
		if !used[n] {
			return invalid(CheckContainer, n, "blob is not referenced by any descriptor")
		}
	}
	return b.loadDocuments()
}

// sortIndex checks each index.json entry and sorts it: the run manifest
// (b.runDesc; runs counts them), signature referrers and reproduction
// referrers.
func (b *Bundle) sortIndex() (runs int, refDescs, reproDescs []ocispec.Descriptor, err error) {
	idx := &b.index
	seen := map[string]bool{}
	for _, d := range idx.Manifests {
		if err := checkDescriptor(d, MaxOCIManifestSize); err != nil {
			return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "%v", err)
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s: mediaType %q, want %q", d.Digest, d.MediaType, ocispec.MediaTypeImageManifest)
		}
		if seen[string(d.Digest)] {
			return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s listed twice", d.Digest)
		}
		seen[string(d.Digest)] = true
		switch d.ArtifactType {
		case ArtifactTypeRun:
			runs++
			b.runDesc = d
		case MediaTypeSigstoreBundle:
			if len(d.Annotations) > 0 {
				return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "referrer %s: unexpected annotations", d.Digest)
			}
			refDescs = append(refDescs, d)
		case ArtifactTypeReproduction:
			if len(d.Annotations) > 0 {
				return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "reproduction %s: unexpected annotations", d.Digest)
			}
			if len(reproDescs) == MaxReproductions {
				return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "more than %d reproductions", MaxReproductions)
			}
			reproDescs = append(reproDescs, d)
		default:
			return 0, nil, nil, invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s: unknown artifactType %q", d.Digest, d.ArtifactType)
		}
	}
	return runs, refDescs, reproDescs, nil
}

// readBlob reads a small blob whole, checking size before reading and the
// digest after.
func (b *Bundle) readBlob(d ocispec.Descriptor, limit int64, check string) ([]byte, error) {
	name := blobPath(d.Digest)
	sz, ok := b.src.size(name)
	if !ok {
		return nil, invalid(CheckDescriptors, string(d.Digest), "blob missing")
	}
	if sz != d.Size {
		return nil, invalid(CheckDescriptors, string(d.Digest), "size mismatch: blob is %d bytes, descriptor says %d", sz, d.Size)
	}
	if d.Size > limit {
		return nil, invalid(CheckDescriptors, string(d.Digest), "size %d over the limit %d", d.Size, limit)
	}
	rc, err := b.src.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, d.Size))
	if _, err := io.Copy(buf, newVerifyingReader(rc, d.Digest, d.Size, check, string(d.Digest), describe(d))); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadSignature returns the Sigstore bundle JSON of a referrer, digest
// verified.
func (b *Bundle) ReadSignature(r Referrer) ([]byte, error) {
	return b.readBlob(r.Bundle, MaxSignatureBundleSize, CheckDescriptors)
}

func (b *Bundle) layerOf(kind string) *Layer {
	for i := range b.layers {
		if b.layers[i].Kind == kind {
			return &b.layers[i]
		}
	}
	return nil
}

func (b *Bundle) loadDocuments() error {
	ml := b.layerOf(KindManifest)
	mb, err := b.readBlob(ml.Descriptor, MaxDocumentSize, CheckDescriptors)
	if err != nil {
		return err
	}
	b.manifest, err = schema.DecodeManifest(bytes.NewReader(mb), TitleManifest)
	if err != nil {
		return wrapInvalid(CheckSchema, TitleManifest, err)
	}
	if b.manifest.RunID != b.run.Annotations[AnnotationRunID] {
		return invalid(CheckSchema, TitleManifest, "run_id %q differs from the run manifest's %q", b.manifest.RunID, b.run.Annotations[AnnotationRunID])
	}
	if cl := b.layerOf(KindClaims); cl != nil {
		cb, err := b.readBlob(cl.Descriptor, MaxDocumentSize, CheckDescriptors)
		if err != nil {
			return err
		}
		b.claims, err = schema.DecodeClaims(bytes.NewReader(cb), TitleClaims)
		if err != nil {
			return wrapInvalid(CheckSchema, TitleClaims, err)
		}
	}
	return nil
}

// RecordLayers returns the records shards in manifest order.
func (b *Bundle) RecordLayers() []Layer {
	var out []Layer
	for _, l := range b.layers {
		if l.Kind == KindRecords {
			out = append(out, l)
		}
	}
	return out
}

// ReadAttachment returns the bytes of the attachment layer titled
// attachments/name, its digest and size checked as it streams; at most
// schema.MaxAttachmentSize bytes.
func (b *Bundle) ReadAttachment(name string) ([]byte, error) {
	for _, l := range b.layers {
		if l.Kind != KindAttachment || l.Title != schema.AttachmentsDir+"/"+name {
			continue
		}
		if l.Descriptor.Size > schema.MaxAttachmentSize {
			return nil, fmt.Errorf("attachment %s: larger than %d bytes", name, schema.MaxAttachmentSize)
		}
		rc, err := b.OpenBlob(l)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	return nil, fmt.Errorf("attachment %s: not in the bundle", name)
}
