package verify

import (
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

const (
	publicGoodSAN    = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
	publicGoodIssuer = "https://token.actions.githubusercontent.com"
	publicGoodSHA512 = "76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"
)

// TestPublicGoodKeylessBundle verifies a real keyless bundle from the
// Sigstore public-good instance (testdata/publicgood/README.md) offline
// against the public-good trusted root, with SCT, transparency log and
// identity policy all required: the right identity verifies, a wrong SAN,
// a wrong issuer or another digest are rejected with their reasons.
func TestPublicGoodKeylessBundle(t *testing.T) {
	data, err := os.ReadFile("testdata/publicgood/bundle-provenance.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRootFromPath("testdata/publicgood/trusted-root-public-good.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(nil, WithTrustedRoot(tr))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := parseSigstore(data)
	if err != nil {
		t.Fatal(err)
	}
	if !sb.keyless {
		t.Fatal("not recognised as keyless")
	}
	digest, _ := hex.DecodeString(publicGoodSHA512)
	good := Identity{SAN: publicGoodSAN, Issuer: publicGoodIssuer}
	who, err := v.verifyBy(sb, Signer{Identity: &good}, "sha512", digest)
	if err != nil {
		t.Fatal(err)
	}
	if who.san != publicGoodSAN || who.issuer != publicGoodIssuer || who.earliest().Year() != 2023 {
		t.Fatalf("%+v", who)
	}
	for _, tc := range []struct {
		id     Identity
		digest []byte
		reason string
	}{
		{Identity{SAN: "https://github.com/evil/repo/.github/workflows/release.yml@refs/heads/main", Issuer: publicGoodIssuer}, digest, ReasonSAN},
		{Identity{SAN: publicGoodSAN, Issuer: "https://accounts.google.com"}, digest, ReasonIssuer},
		{good, make([]byte, 64), ReasonDigest},
	} {
		_, err := v.verifyBy(sb, Signer{Identity: &tc.id}, "sha512", tc.digest)
		if err == nil || !strings.HasPrefix(err.Error(), tc.reason) {
			t.Errorf("%s: want %q, got %v", tc.id, tc.reason, err)
		}
		// The reason wraps sigstore-go's error, so a typed one stays
		// matchable (errors.As), as the SAN and issuer mismatches are.
		if errors.Unwrap(err) == nil {
			t.Errorf("%s: sigstore-go's error is cut from the chain: %v", tc.id, err)
		}
		var mismatch *sgverify.ErrValueMismatch
		if tc.reason == ReasonSAN && !errors.As(err, &mismatch) {
			t.Errorf("%s: no sgverify.ErrValueMismatch in %v", tc.id, err)
		}
	}
}
