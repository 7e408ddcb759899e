package artifact

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/schema"
)

// A reproduction referrer carries a reproduction run (benchseal reproduce,
// packed) inside the bundle of the run it reproduces, as an OCI referrer
// of the original's run manifest, so that push and pull move both
// together. Its manifest has artifactType ArtifactTypeReproduction, the
// empty config, and as layers first the reproduction's own run manifest
// (media type MediaTypeReproductionRun, byte for byte) and then every
// layer descriptor of that run manifest, unchanged and in order: every
// blob is pinned by digest in the referrer, so a registry keeps them, and
// the reproduction's run manifest together with its blobs is a bundle of
// its own (ExtractReproduction).
const (
	// ArtifactTypeReproduction is the artifactType of a reproduction
	// referrer.
	ArtifactTypeReproduction = "application/vnd.benchseal.reproduction.v1"
	// MediaTypeReproductionRun is the media type of a reproduction
	// referrer's first layer: the reproduction's run manifest.
	MediaTypeReproductionRun = ocispec.MediaTypeImageManifest
)

// Reproduction is one reproduction referrer of a bundle.
type Reproduction struct {
	// Descriptor is the referrer manifest's descriptor in index.json.
	Descriptor ocispec.Descriptor
	// RunDescriptor is the reproduction's run manifest, and Run its
	// decoded form; Layers its layers in order.
	RunDescriptor ocispec.Descriptor
	Run           ocispec.Manifest
	Layers        []Layer
	runBytes      []byte
}

// RunID returns the reproduction run's id.
func (r Reproduction) RunID() string { return r.Run.Annotations[AnnotationRunID] }

// ManifestJSONDigest returns the digest of the reproduction's
// manifest.json (its first layer, stored byte for byte): the digest a
// BENCHSEAL_REPRODUCED attestation names.
func (r Reproduction) ManifestJSONDigest() digest.Digest { return r.Layers[0].Descriptor.Digest }

// Reproductions returns the reproduction referrers in index order.
func (b *Bundle) Reproductions() []Reproduction { return b.repros }

// ParseReproductionReferrer decodes a reproduction referrer manifest
// strictly and checks everything about it that does not need its first
// layer's bytes: fields, subject (it must be run), annotations, the empty
// config and the layer descriptors (the first one the run manifest within
// MaxOCIManifestSize, at most MaxLayers more). name names it in errors.
func ParseReproductionReferrer(mb []byte, name string, run ocispec.Descriptor) (ocispec.Manifest, error) {
	var m ocispec.Manifest
	if int64(len(mb)) > MaxOCIManifestSize {
		return m, invalid(CheckManifest, name, "reproduction referrer: size %d over the limit %d", len(mb), MaxOCIManifestSize)
	}
	if err := decodeStrict(mb, &m); err != nil {
		return m, invalid(CheckManifest, name, "reproduction referrer: %v", err)
	}
	bad := func(format string, args ...any) error {
		return invalid(CheckManifest, name, "reproduction referrer: "+format, args...)
	}
	switch {
	case m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest:
		return m, bad("not an image manifest v2")
	case m.ArtifactType != ArtifactTypeReproduction:
		return m, bad("artifactType %q, want %q", m.ArtifactType, ArtifactTypeReproduction)
	case m.Subject == nil || m.Subject.Digest != run.Digest || m.Subject.Size != run.Size || m.Subject.MediaType != ocispec.MediaTypeImageManifest:
		return m, bad("subject is not this bundle's run manifest %s", run.Digest)
	case len(m.Subject.Annotations) > 0 || m.Subject.ArtifactType != "":
		return m, bad("unexpected subject annotations")
	case len(m.Layers) < 2 || len(m.Layers) > MaxLayers+1:
		return m, bad("%d layers (want the run manifest and 1 to %d run layers)", len(m.Layers), MaxLayers)
	case len(m.Annotations) > 0:
		return m, bad("unexpected annotations")
	case !isEmptyConfig(m.Config):
		return m, bad("config must be the empty descriptor")
	}
	l := m.Layers[0]
	if err := checkDescriptor(l, MaxOCIManifestSize); err != nil {
		return m, bad("layer 0: %v", err)
	}
	if l.MediaType != MediaTypeReproductionRun || len(l.Annotations) > 0 || l.ArtifactType != "" {
		return m, bad("layer 0 must be the reproduction's run manifest (media type %q, no annotations)", MediaTypeReproductionRun)
	}
	return m, nil
}

// CheckReproductionRun checks the reproduction run manifest rb, the first
// layer of the reproduction referrer m (whose descriptor it must match),
// and that the referrer's other layers are exactly the run manifest's
// layers in order. It returns the decoded run manifest and its layers.
func CheckReproductionRun(m ocispec.Manifest, rb []byte, name string) (ocispec.Manifest, []Layer, error) {
	l := m.Layers[0]
	if int64(len(rb)) != l.Size || DigestBytes(rb) != l.Digest {
		return ocispec.Manifest{}, nil, invalid(CheckDescriptors, name, "reproduction run manifest: content is not %s", l.Digest)
	}
	run, layers, err := checkRunShape(rb, string(l.Digest))
	if err != nil {
		return run, nil, invalid(CheckManifest, name, "reproduction run manifest %s: %v", l.Digest, err)
	}
	if len(run.Layers) != len(m.Layers)-1 {
		return run, nil, invalid(CheckManifest, name, "reproduction referrer lists %d run layers, its run manifest %s has %d", len(m.Layers)-1, l.Digest, len(run.Layers))
	}
	for i, d := range run.Layers {
		if !reflect.DeepEqual(d, m.Layers[i+1]) {
			return run, nil, invalid(CheckManifest, name, "reproduction referrer layer %d (%s) is not layer %d (%s) of its run manifest", i+1, m.Layers[i+1].Digest, i, d.Digest)
		}
	}
	return run, layers, nil
}

// loadReproduction checks one reproduction referrer of the bundle: its
// shape, its run manifest, and that every blob is present with its size
// (the digests are checked as they stream, by CheckBlobs and CheckContent).
func (b *Bundle) loadReproduction(d ocispec.Descriptor, used map[string]bool) (Reproduction, error) {
	r := Reproduction{Descriptor: d}
	name := string(d.Digest)
	mb, err := b.readBlob(d, MaxOCIManifestSize, CheckDescriptors)
	if err != nil {
		return r, err
	}
	used[blobPath(d.Digest)] = true
	m, err := ParseReproductionReferrer(mb, name, b.runDesc)
	if err != nil {
		return r, err
	}
	if err := b.checkEmptyConfig(m.Config, name, used); err != nil {
		return r, err
	}
	r.RunDescriptor = ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: ArtifactTypeRun, Digest: m.Layers[0].Digest, Size: m.Layers[0].Size}
	if r.RunDescriptor.Digest == b.runDesc.Digest {
		return r, invalid(CheckManifest, name, "reproduction referrer: the reproduction is the original run itself")
	}
	if r.runBytes, err = b.readBlob(m.Layers[0], MaxOCIManifestSize, CheckDescriptors); err != nil {
		return r, err
	}
	used[blobPath(m.Layers[0].Digest)] = true
	if r.Run, r.Layers, err = CheckReproductionRun(m, r.runBytes, name); err != nil {
		return r, err
	}
	for _, l := range r.Layers {
		p := blobPath(l.Descriptor.Digest)
		sz, ok := b.src.size(p)
		if !ok {
			return r, invalid(CheckDescriptors, string(l.Descriptor.Digest), "blob of reproduction %s layer %q missing", r.RunDescriptor.Digest, l.Title)
		}
		if sz != l.Descriptor.Size {
			return r, invalid(CheckDescriptors, string(l.Descriptor.Digest), "size mismatch: blob is %d bytes, descriptor says %d", sz, l.Descriptor.Size)
		}
		used[p] = true
	}
	return r, nil
}

// OpenReproduction returns the reproduction referrer r of b as a bundle
// of its own, read from b's blobs in place (nothing is copied): its run
// manifest and layers as Open checked them, its manifest and claims
// documents decoded as Open decodes a bundle's, and no referrers. Its
// records stream digest checked, as any bundle's (schema.Run). It is
// valid while b is open; closing it leaves b open.
func (b *Bundle) OpenReproduction(r Reproduction) (*Bundle, error) {
	rb := &Bundle{
		path: b.path + "@" + string(r.RunDescriptor.Digest), src: sharedSource{b.src},
		runDesc: r.RunDescriptor, run: r.Run, runBytes: r.runBytes, layers: r.Layers,
		created: r.Run.Annotations[AnnotationCreated],
	}
	if err := rb.loadDocuments(); err != nil {
		return nil, fmt.Errorf("reproduction %s: %w", r.RunDescriptor.Digest, err)
	}
	return rb, nil
}

// sharedSource is a source another bundle owns: closing it leaves it open.
type sharedSource struct{ source }

func (sharedSource) close() error { return nil }

// ReproductionRunBytes returns the reproduction's run manifest exactly as
// stored (its digest was checked by Open).
func (r Reproduction) ReproductionRunBytes() []byte { return bytes.Clone(r.runBytes) }

// ReadReproductionManifest returns the reproduction referrer manifest of
// r exactly as stored, digest verified.
func (b *Bundle) ReadReproductionManifest(r Reproduction) ([]byte, error) {
	return b.readBlob(r.Descriptor, MaxOCIManifestSize, CheckDescriptors)
}

// AttachReproduction adds the bundle at reproPath (a packed reproduction
// run) as a reproduction referrer of the run manifest of the bundle at
// path, after checking every blob of both. It is atomic like Sign, keeps
// every earlier referrer, and attaching the same reproduction again is a
// no-op returning the existing referrer. The reproduction's own signature
// referrers are not copied: its run manifest and layers are.
func AttachReproduction(ctx context.Context, path, reproPath string) (ocispec.Descriptor, error) {
	rep, err := Open(reproPath)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("reproduction %s: %w", reproPath, err)
	}
	defer rep.Close()
	add, refMan, err := reproductionBlobs(ctx, rep)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("reproduction %s: %w", reproPath, err)
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
	if rep.runDesc.Digest == b.runDesc.Digest {
		return ocispec.Descriptor{}, fmt.Errorf("attach reproduction: %s is the original run itself", reproPath)
	}
	if err := b.CheckContent(ctx); err != nil {
		return ocispec.Descriptor{}, err
	}
	refMan.Subject = &ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: b.runDesc.Digest, Size: b.runDesc.Size}
	rb, err := marshalDoc(refMan)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	rd := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: ArtifactTypeReproduction, Digest: DigestBytes(rb), Size: int64(len(rb))}
	refs := []ocispec.Descriptor{rd}
	for _, r := range b.repros {
		if r.Descriptor.Digest == rd.Digest {
			return rd, nil
		}
	}
	if len(b.repros) >= MaxReproductions {
		return ocispec.Descriptor{}, fmt.Errorf("attach reproduction: %s already carries %d reproductions, the limit", path, MaxReproductions)
	}
	if len(b.index.Manifests)+1 > MaxIndexEntries {
		return ocispec.Descriptor{}, fmt.Errorf("attach reproduction: %s already lists %d manifests, the limit", path, len(b.index.Manifests))
	}
	for _, d := range b.index.Manifests {
		if d.Digest != b.runDesc.Digest {
			refs = append(refs, d)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Digest < refs[j].Digest })
	ib, err := marshalIndex(b.runDesc, refs)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	for p := range add {
		if _, ok := b.src.size(p); ok {
			delete(add, p) // a blob the original already holds (the empty config, say)
		}
	}
	add[blobPath(rd.Digest)] = rb
	if err := b.commit(ctx, path, add, ib); err != nil {
		return ocispec.Descriptor{}, err
	}
	return rd, nil
}

// reproductionBlobs reads every blob of the reproduction bundle rep,
// digest checked, and makes its referrer manifest (without subject).
func reproductionBlobs(ctx context.Context, rep *Bundle) (map[string][]byte, ocispec.Manifest, error) {
	var total int64
	for _, l := range rep.layers {
		total += l.Descriptor.Size
	}
	if total > MaxAttachedReproductionSize {
		return nil, ocispec.Manifest{}, fmt.Errorf("%d stored bytes, over the limit %d of an attached reproduction", total, int64(MaxAttachedReproductionSize))
	}
	add := map[string][]byte{blobPath(rep.runDesc.Digest): rep.RunManifestBytes()}
	layers := []ocispec.Descriptor{{MediaType: MediaTypeReproductionRun, Digest: rep.runDesc.Digest, Size: rep.runDesc.Size}}
	for _, l := range rep.layers {
		if err := ctx.Err(); err != nil {
			return nil, ocispec.Manifest{}, err
		}
		rc, err := rep.OpenBlob(l)
		if err != nil {
			return nil, ocispec.Manifest{}, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, ocispec.Manifest{}, err
		}
		add[blobPath(l.Descriptor.Digest)] = data
	}
	layers = append(layers, rep.run.Layers...)
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeReproduction,
		Config:       emptyDescriptor(),
		Layers:       layers,
	}
	return add, m, nil
}

// ExtractReproduction writes the reproduction whose run manifest digest,
// or whose referrer manifest digest (what attest prints when it attaches
// one), is run out of the bundle b as a bundle of its own at out (a
// directory, or a tar when out ends in ".tar"; out must not exist): its
// run manifest, its blobs, no signatures. Every blob is digest checked
// while it is copied, and the result is checked with Open.
func (b *Bundle) ExtractReproduction(ctx context.Context, run digest.Digest, out string) error {
	var r *Reproduction
	var have []string
	for i := range b.repros {
		if b.repros[i].RunDescriptor.Digest == run || b.repros[i].Descriptor.Digest == run {
			r = &b.repros[i]
		}
		have = append(have, fmt.Sprintf("run manifest %s (referrer %s)", b.repros[i].RunDescriptor.Digest, b.repros[i].Descriptor.Digest))
	}
	if r == nil {
		if len(have) == 0 {
			return fmt.Errorf("%s carries no reproduction with run manifest %s: it carries none", b.path, run)
		}
		return fmt.Errorf("%s carries no reproduction with run manifest %s; it carries %s", b.path, run, strings.Join(have, ", "))
	}
	w, err := NewLayoutWriter(out)
	if err != nil {
		return err
	}
	if err := w.WriteBlob(bytes.NewReader(r.runBytes), r.RunDescriptor, MaxOCIManifestSize); err != nil {
		w.Abort()
		return err
	}
	cfg, cb := EmptyConfig()
	if err := w.WriteBlob(bytes.NewReader(cb), cfg, 2); err != nil {
		w.Abort()
		return err
	}
	for _, l := range r.Layers {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return err
		}
		rc, err := b.src.open(blobPath(l.Descriptor.Digest))
		if err != nil {
			w.Abort()
			return err
		}
		err = w.WriteBlob(rc, l.Descriptor, MaxBlobSize)
		rc.Close()
		if err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit(r.RunDescriptor, r.RunID(), nil)
}

// CheckReproductions streams every stored blob of each reproduction
// referrer, checking its digest and size: a reproduction whose content
// does not match its pinned digests is an *Error naming the blob.
func (b *Bundle) CheckReproductions(ctx context.Context) error {
	for _, r := range b.repros {
		for _, l := range r.Layers {
			if err := ctx.Err(); err != nil {
				return err
			}
			rc, err := b.OpenBlob(l)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, schema.ContextReader(ctx, rc))
			rc.Close()
			if err != nil {
				return fmt.Errorf("reproduction %s: %w", r.RunDescriptor.Digest, err)
			}
		}
	}
	return nil
}
