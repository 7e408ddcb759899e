package artifact

import (
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestStaleSignatureSaysTheBundleChanged: a signature whose subject is
// another run manifest (the bundle edited and re-digested after signing)
// is said as such, not as a bare digest mismatch, and is told apart (a
// staleError) from a malformed referrer, so that the bundle still opens.
func TestStaleSignatureSaysTheBundleChanged(t *testing.T) {
	old := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("old"), Size: 3}
	run := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("new"), Size: 3}
	mb := []byte(`{"schemaVersion":2,"mediaType":"` + ocispec.MediaTypeImageManifest + `","artifactType":"` + MediaTypeSigstoreBundle +
		`","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},` +
		`"layers":[{"mediaType":"` + MediaTypeSigstoreBundle + `","digest":"` + string(digest.FromString("sig")) + `","size":3}],"subject":{"mediaType":"` + old.MediaType + `","digest":"` + string(old.Digest) + `","size":3}}`)
	_, err := checkReferrerShape(mb, "ref", run)
	if err == nil || !strings.Contains(err.Error(), "the bundle was changed after it was signed") || !strings.Contains(err.Error(), "no longer covers it") {
		t.Fatalf("error %v", err)
	}
	if se := (*staleError)(nil); !errors.As(err, &se) {
		t.Errorf("error %v is not a staleError", err)
	}
}
