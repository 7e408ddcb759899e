package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/errcond"
)

// ErrReference is returned for a reference that cannot be used: not
// host[:port]/repository followed by :tag or @sha256:digest.
var ErrReference = errors.New("invalid registry reference")

// Options are the connection settings of Push and Pull.
type Options struct {
	// PlainHTTP talks HTTP instead of HTTPS (for loopback test
	// registries).
	PlainHTTP bool
	// Credential resolves the credential for a registry host[:port]; nil
	// means anonymous. Use oras-go's credentials.Credential(store) for the
	// Docker config, or auth.StaticCredential.
	Credential auth.CredentialFunc
	// HTTPClient is the underlying HTTP client; nil means oras-go's
	// retrying client over a transport with ResponseHeaderTimeout (a
	// timed-out request is not retried).
	HTTPClient *http.Client
	// ResponseHeaderTimeout bounds the wait for each response's headers
	// (0: DefaultResponseHeaderTimeout; negative: none). It applies to
	// the default client only.
	ResponseHeaderTimeout time.Duration
	// Timeout bounds a whole Push or Pull, trickling bodies included (0:
	// DefaultTimeout; negative: none).
	Timeout time.Duration
	// ReferrersTagSchema forces the referrers tag schema ("sha256-<hex>")
	// instead of probing for the referrers API.
	ReferrersTagSchema bool
}

// maxReferrerPages bounds the referrers pages a registry can make Pull
// fetch.
const maxReferrerPages = 16

// parseRef parses host[:port]/repo followed by :tag or @digest.
func parseRef(s string) (registry.Reference, error) {
	ref, err := registry.ParseReference(s)
	if err != nil {
		return ref, errcond.Errorf(ErrReference, "invalid registry reference %q: %w", s, err)
	}
	if ref.Reference == "" {
		return ref, errcond.Errorf(ErrReference, "invalid registry reference %q: needs a :tag or an @sha256:digest", s)
	}
	if d, err := ref.Digest(); err == nil {
		if _, err := artifact.ParseDigest(string(d)); err != nil {
			return ref, errcond.Errorf(ErrReference, "invalid registry reference %q: %w", s, err)
		}
	}
	return ref, nil
}

func newRepository(ref registry.Reference, opts Options) (*remote.Repository, error) {
	repo := &remote.Repository{
		Reference: registry.Reference{Registry: ref.Registry, Repository: ref.Repository},
		PlainHTTP: opts.PlainHTTP,
		// Keep superseded referrers-tag indexes instead of deleting them:
		// works on registries with deletion disabled.
		SkipReferrersGC:      true,
		ReferrerListMaxPages: maxReferrerPages,
		TagListMaxPages:      maxReferrerPages,
		MaxMetadataBytes:     artifact.MaxOCIManifestSize,
	}
	client := &auth.Client{Client: opts.httpClient(), Credential: opts.Credential, Cache: auth.NewCache()}
	client.SetUserAgent("benchseal")
	repo.Client = client
	if opts.ReferrersTagSchema {
		if err := repo.SetReferrersCapability(false); err != nil {
			return nil, err
		}
	}
	return repo, nil
}

// manifestDescriptor is the descriptor under which a manifest is pushed
// and fetched.
func manifestDescriptor(d digest.Digest, size int64) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d, Size: size}
}

// fetchBytes fetches a small blob or manifest, size-limited and
// digest-checked while it streams.
func fetchBytes(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if err := artifact.ValidateDescriptor(d, limit); err != nil {
		return nil, &artifact.Error{Check: artifact.CheckDescriptors, Blob: string(d.Digest), Err: err}
	}
	rc, err := repo.Fetch(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", d.Digest, err)
	}
	defer rc.Close()
	return artifact.ReadVerified(rc, d, limit)
}

// pushBlob uploads a blob unless the registry already has it. It reports
// whether it uploaded.
func pushBlob(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, open func() (io.ReadCloser, error)) (bool, error) {
	ok, err := repo.Exists(ctx, d)
	if err != nil {
		return false, fmt.Errorf("check blob %s: %w", d.Digest, err)
	}
	if ok {
		return false, nil
	}
	rc, err := open()
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if err := repo.Push(ctx, d, rc); err != nil {
		return false, fmt.Errorf("push blob %s: %w", d.Digest, err)
	}
	return true, nil
}

func bytesOpener(b []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}
