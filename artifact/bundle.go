package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

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
	seen := map[string]bool{}
	runs := 0
	var refDescs []ocispec.Descriptor
	for _, d := range idx.Manifests {
		if err := checkDescriptor(d, MaxManifestSize); err != nil {
			return invalid(CheckLayout, ocispec.ImageIndexFile, "%v", err)
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			return invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s: mediaType %q, want %q", d.Digest, d.MediaType, ocispec.MediaTypeImageManifest)
		}
		if seen[string(d.Digest)] {
			return invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s listed twice", d.Digest)
		}
		seen[string(d.Digest)] = true
		switch d.ArtifactType {
		case ArtifactTypeRun:
			runs++
			b.runDesc = d
		case MediaTypeSigstoreBundle:
			if len(d.Annotations) > 0 {
				return invalid(CheckLayout, ocispec.ImageIndexFile, "referrer %s: unexpected annotations", d.Digest)
			}
			refDescs = append(refDescs, d)
		default:
			return invalid(CheckLayout, ocispec.ImageIndexFile, "entry %s: unknown artifactType %q", d.Digest, d.ArtifactType)
		}
	}
	if runs != 1 {
		return invalid(CheckLayout, ocispec.ImageIndexFile, "%d run manifests, want exactly 1", runs)
	}
	if len(b.runDesc.Annotations) != 1 || b.runDesc.Annotations[AnnotationRefName] == "" {
		return invalid(CheckLayout, ocispec.ImageIndexFile, "run manifest entry must carry exactly the %s annotation", AnnotationRefName)
	}

	// The run manifest.
	b.runBytes, err = b.readBlob(b.runDesc, MaxManifestSize, CheckDescriptors)
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
		b.referrers = append(b.referrers, r)
	}
	for _, n := range b.src.names() {
		if !used[n] {
			return invalid(CheckContainer, n, "blob is not referenced by any descriptor")
		}
	}
	return b.loadDocuments()
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

func isEmptyConfig(d ocispec.Descriptor) bool {
	return d.MediaType == ocispec.MediaTypeEmptyJSON && d.Digest == ocispec.DescriptorEmptyJSON.Digest &&
		d.Size == ocispec.DescriptorEmptyJSON.Size && len(d.Annotations) == 0 && len(d.Data) == 0 &&
		len(d.URLs) == 0 && d.Platform == nil && d.ArtifactType == ""
}

func (b *Bundle) checkEmptyConfig(d ocispec.Descriptor, owner string, used map[string]bool) error {
	if !isEmptyConfig(d) {
		return invalid(CheckManifest, owner, "config must be the empty descriptor")
	}
	if _, err := b.readBlob(d, 2, CheckDescriptors); err != nil {
		return err
	}
	used[blobPath(d.Digest)] = true
	return nil
}

func (b *Bundle) checkRunManifest(used map[string]bool) error {
	name := string(b.runDesc.Digest)
	m, layers, err := checkRunShape(b.runBytes, name)
	if err != nil {
		return err
	}
	b.run = m
	if m.Annotations[AnnotationRunID] != b.runDesc.Annotations[AnnotationRefName] {
		return invalid(CheckManifest, name, "run id %q differs from the index ref.name %q", m.Annotations[AnnotationRunID], b.runDesc.Annotations[AnnotationRefName])
	}
	b.created = m.Annotations[AnnotationCreated]
	if err := b.checkEmptyConfig(m.Config, name, used); err != nil {
		return err
	}
	for _, l := range layers {
		d := l.Descriptor
		p := blobPath(d.Digest)
		sz, ok := b.src.size(p)
		if !ok {
			return invalid(CheckDescriptors, string(d.Digest), "blob of layer %q missing", l.Title)
		}
		if sz != d.Size {
			return invalid(CheckDescriptors, string(d.Digest), "size mismatch: blob is %d bytes, descriptor says %d", sz, d.Size)
		}
		used[p] = true
	}
	b.layers = layers
	return nil
}

// checkRunShape decodes a run manifest strictly and checks everything about
// it that does not need the other blobs: fields, annotations, the empty
// config descriptor, and every layer descriptor, their order and titles.
func checkRunShape(mb []byte, name string) (ocispec.Manifest, []Layer, error) {
	var m ocispec.Manifest
	if err := decodeStrict(mb, &m); err != nil {
		return m, nil, invalid(CheckManifest, name, "%v", err)
	}
	switch {
	case m.SchemaVersion != 2:
		return m, nil, invalid(CheckManifest, name, "schemaVersion %d, want 2", m.SchemaVersion)
	case m.MediaType != ocispec.MediaTypeImageManifest:
		return m, nil, invalid(CheckManifest, name, "mediaType %q, want %q", m.MediaType, ocispec.MediaTypeImageManifest)
	case m.ArtifactType != ArtifactTypeRun:
		return m, nil, invalid(CheckManifest, name, "artifactType %q, want %q", m.ArtifactType, ArtifactTypeRun)
	case m.Subject != nil:
		return m, nil, invalid(CheckManifest, name, "a run manifest has no subject")
	case len(m.Layers) == 0 || len(m.Layers) > MaxLayers:
		return m, nil, invalid(CheckManifest, name, "%d layers (want 1 to %d)", len(m.Layers), MaxLayers)
	case len(m.Annotations) != 2 || m.Annotations[AnnotationRunID] == "":
		return m, nil, invalid(CheckManifest, name, "annotations must be exactly %s and %s", AnnotationCreated, AnnotationRunID)
	}
	created := m.Annotations[AnnotationCreated]
	if t, err := time.Parse(time.RFC3339, created); err != nil || t.UTC().Format(time.RFC3339) != created {
		return m, nil, invalid(CheckManifest, name, "annotation %s %q is not an RFC 3339 UTC time", AnnotationCreated, created)
	}
	if !isEmptyConfig(m.Config) {
		return m, nil, invalid(CheckManifest, name, "config must be the empty descriptor")
	}
	rank := map[string]int{KindManifest: 0, KindClaims: 1, KindWorkload: 2, KindRecords: 3, KindAttachment: 4}
	titles := map[string]bool{}
	last := -1
	var layers []Layer
	for i, d := range m.Layers {
		l, err := layerFromDescriptor(d)
		if err != nil {
			return m, nil, invalid(CheckManifest, fmt.Sprintf("%s layer %d (%s)", name, i, d.Digest), "%v", err)
		}
		r := rank[l.Kind]
		if i == 0 && l.Kind != KindManifest {
			return m, nil, invalid(CheckManifest, name, "first layer must be %s", TitleManifest)
		}
		if r < last || (r == last && r < rank[KindRecords]) {
			return m, nil, invalid(CheckManifest, name, "layer %d (%s) out of order or repeated", i, l.Title)
		}
		last = r
		if titles[l.Title] {
			return m, nil, invalid(CheckManifest, name, "two layers titled %q", l.Title)
		}
		titles[l.Title] = true
		layers = append(layers, l)
	}
	return m, layers, nil
}

func (b *Bundle) loadReferrer(d ocispec.Descriptor, used map[string]bool) (Referrer, error) {
	r := Referrer{Descriptor: d}
	name := string(d.Digest)
	mb, err := b.readBlob(d, MaxManifestSize, CheckDescriptors)
	if err != nil {
		return r, err
	}
	used[blobPath(d.Digest)] = true
	r.Manifest, err = checkReferrerShape(mb, name, b.runDesc)
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
	case m.Subject.Digest != run.Digest || m.Subject.Size != run.Size || m.Subject.MediaType != ocispec.MediaTypeImageManifest:
		return m, invalid(CheckSignature, name, "subject %s is not the run manifest %s", m.Subject.Digest, run.Digest)
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
	return m, nil
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

// OpenBlob streams the stored bytes of a layer; the size and digest are
// checked as the bytes stream, and a mismatch is returned as an error by
// Read (before io.EOF).
func (b *Bundle) OpenBlob(l Layer) (io.ReadCloser, error) {
	rc, err := b.src.open(blobPath(l.Descriptor.Digest))
	if err != nil {
		return nil, err
	}
	vr := newVerifyingReader(rc, l.Descriptor.Digest, l.Descriptor.Size, CheckDescriptors, string(l.Descriptor.Digest), describe(l.Descriptor))
	return struct {
		io.Reader
		io.Closer
	}{vr, rc}, nil
}

// OpenLayer streams the uncompressed content of a layer. The stored digest
// and size, and the uncompressed digest and size, are checked as the bytes
// stream; decompression uses a bounded window and never produces more than
// the declared uncompressed size.
func (b *Bundle) OpenLayer(l Layer) (io.ReadCloser, error) {
	rc, err := b.src.open(blobPath(l.Descriptor.Digest))
	if err != nil {
		return nil, err
	}
	stored := newVerifyingReader(rc, l.Descriptor.Digest, l.Descriptor.Size, CheckDescriptors, string(l.Descriptor.Digest), describe(l.Descriptor))
	if !l.Compressed {
		return struct {
			io.Reader
			io.Closer
		}{stored, rc}, nil
	}
	zr, err := schema.NewZstdReader(stored)
	if err != nil {
		rc.Close()
		return nil, wrapInvalid(CheckUncompressed, l.Title, err)
	}
	return &layerReader{
		rc: rc, stored: stored, zr: zr,
		un: newVerifyingReader(&zstdErrReader{zr: zr, title: l.Title}, l.UncompressedDigest, l.UncompressedSize, CheckUncompressed, l.Title, fmt.Sprintf("the uncompressed content of %q", l.Title)),
	}, nil
}

// zstdErrReader names the layer in decompression errors.
type zstdErrReader struct {
	zr    io.Reader
	title string
}

func (z *zstdErrReader) Read(p []byte) (int, error) {
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		var ae *Error
		if errors.As(err, &ae) {
			return n, err
		}
		return n, invalid(CheckUncompressed, z.title, "decompress: %v", err)
	}
	return n, err
}

type layerReader struct {
	rc     io.Closer
	stored *verifyingReader
	zr     io.Closer
	un     *verifyingReader
	done   bool
}

func (l *layerReader) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	n, err := l.un.Read(p)
	if err == io.EOF || (err == nil && l.un.done) {
		// The frame ended: the stored stream must be fully consumed and
		// match its digest too.
		if _, derr := io.Copy(io.Discard, l.stored); derr != nil {
			return n, derr
		}
		if !l.stored.done {
			return n, invalid(CheckDescriptors, string(l.stored.want), "stored blob not fully consumed")
		}
		l.done = true
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

func (l *layerReader) Close() error {
	l.zr.Close()
	return l.rc.Close()
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
