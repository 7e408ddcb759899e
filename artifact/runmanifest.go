package artifact

import (
	"fmt"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/schema"
)

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
	var attachments []string
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
		if l.Kind == KindAttachment {
			attachments = append(attachments, strings.TrimPrefix(l.Title, "attachments/"))
		}
		layers = append(layers, l)
	}
	if err := schema.CheckAttachmentNames(attachments); err != nil {
		return m, nil, invalid(CheckManifest, name, "%v", err)
	}
	return m, layers, nil
}
