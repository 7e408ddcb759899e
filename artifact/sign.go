package artifact

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/schema"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
func bytesTrim(b []byte) []byte      { return bytes.TrimSpace(b) }

// DetachedPath returns where the detached Sigstore bundle of the bundle at
// path is written: path + ".sigstore.json".
func DetachedPath(path string) string {
	return strings.TrimRight(path, "/") + ".sigstore.json"
}

// SignResult describes a new signature.
type SignResult struct {
	// Referrer is the descriptor of the new referrer manifest.
	Referrer ocispec.Descriptor
	// SigstoreBundle is the Sigstore bundle JSON.
	SigstoreBundle []byte
	// DetachedPath is where the detached copy was written.
	DetachedPath string
	// Fingerprint is the signing key's fingerprint.
	Fingerprint string
}

// SignStatement signs statement bytes as a DSSE envelope (payload type
// application/vnd.in-toto+json) in a Sigstore bundle v0.3 with a public-key
// hint and no transparency log or timestamps, and returns the bundle JSON.
func SignStatement(ctx context.Context, stmt []byte, s *Signer) ([]byte, error) {
	pb, err := sign.Bundle(&sign.DSSEData{Data: stmt, PayloadType: PayloadTypeInToto}, s, sign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	out, err := protojson.Marshal(pb)
	if err != nil {
		return nil, fmt.Errorf("sign: encode bundle: %w", err)
	}
	return out, nil
}

// Sign checks the bundle at path in full (every blob and uncompressed
// digest), signs its statement, and adds the signature as a new referrer
// (subject = run manifest) — atomically: blobs first, then index.json by
// rename for a directory; a whole new tar by rename for a tar. It also
// writes the Sigstore bundle to DetachedPath(path). Earlier signatures are
// kept.
func Sign(ctx context.Context, path string, s *Signer) (*SignResult, error) {
	b, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.CheckContent(ctx); err != nil {
		return nil, err
	}
	stmt, err := MarshalStatement(b.Statement())
	if err != nil {
		return nil, err
	}
	sb, err := SignStatement(ctx, stmt, s)
	if err != nil {
		return nil, err
	}
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
			AnnotationBundlePredicateType: PredicateTypeRun,
			AnnotationCreated:             b.created,
		},
	}
	rb, err := marshalDoc(ref)
	if err != nil {
		return nil, err
	}
	rd := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: MediaTypeSigstoreBundle, Digest: DigestBytes(rb), Size: int64(len(rb))}
	refs := []ocispec.Descriptor{rd}
	for _, r := range b.referrers {
		refs = append(refs, r.Descriptor)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Digest < refs[j].Digest })
	ib, err := marshalIndex(b.runDesc, refs)
	if err != nil {
		return nil, err
	}
	add := map[string][]byte{
		blobPath(bd):        sb,
		blobPath(rd.Digest): rb,
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch src := b.src.(type) {
	case *dirSource:
		for name, data := range add {
			p := filepath.Join(path, filepath.FromSlash(name))
			if _, err := os.Lstat(p); err == nil {
				continue // content-addressed: already there
			}
			if err := schema.WriteFileAtomic(p, data, 0o644); err != nil {
				return nil, fmt.Errorf("sign %s: %w", path, err)
			}
		}
		if err := schema.WriteFileAtomic(filepath.Join(path, ocispec.ImageIndexFile), ib, 0o644); err != nil {
			return nil, fmt.Errorf("sign %s: %w", path, err)
		}
	case *tarSource:
		add[ocispec.ImageIndexFile] = ib
		mt, _ := parseCreated(b.created)
		if err := writeTarAtomic(path, src, add, mt, true); err != nil {
			return nil, fmt.Errorf("sign %s: %w", path, err)
		}
	}
	dp := DetachedPath(path)
	if err := schema.WriteFileAtomic(dp, sb, 0o644); err != nil {
		return nil, fmt.Errorf("sign: write %s: %w", dp, err)
	}
	return &SignResult{Referrer: rd, SigstoreBundle: sb, DetachedPath: dp, Fingerprint: s.pub.Fingerprint()}, nil
}

// CheckContent streams every layer of the bundle, checking stored and
// uncompressed digests and sizes, and every referrer's signature blob
// digest. It does not check signatures.
func (b *Bundle) CheckContent(ctx context.Context) error {
	return b.streamAll(ctx, b.OpenLayer)
}

// CheckBlobs streams every stored blob of the bundle, its layers (as
// stored, not decompressed) and every referrer's signature blob, checking
// their digests and sizes. It does not check uncompressed content or
// signatures.
func (b *Bundle) CheckBlobs(ctx context.Context) error {
	return b.streamAll(ctx, b.OpenBlob)
}

// streamAll reads every layer through open, then every signature blob,
// stopping at the first error.
func (b *Bundle) streamAll(ctx context.Context, open func(Layer) (io.ReadCloser, error)) error {
	for _, l := range b.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		rc, err := open(l)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	for _, r := range b.referrers {
		if _, err := b.ReadSignature(r); err != nil {
			return err
		}
	}
	return nil
}

func parseCreated(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
