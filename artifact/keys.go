package artifact

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/benchseal/benchseal/internal/errcond"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// ErrKey is the condition of a key that cannot be used: not a key, not
// ECDSA P-256, or not opened.
var ErrKey = errors.New("bad key")

// ErrKeyNotOpened: a private key did not decode or decrypt with the
// password given (most often a wrong password). It is also an ErrKey: a
// condition within that one.
var ErrKeyNotOpened = errcond.Errorf(ErrKey, "private key not opened")

// GenerateKey makes an ECDSA P-256 key pair: the private key PEM-encoded in
// cosign's "ENCRYPTED SIGSTORE PRIVATE KEY" format (scrypt + secretbox,
// encrypted even when the password is empty, as cosign does) and the
// public key as a PKIX "PUBLIC KEY" PEM.
func GenerateKey(password []byte) (privPEM, pubPEM []byte, err error) {
	if password == nil {
		password = []byte{}
	}
	privPEM, pubPEM, err = cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	return privPEM, pubPEM, nil
}

// Signer signs with an ECDSA P-256 key (SHA-256). It implements sigstore-go's
// sign.Keypair.
type Signer struct {
	priv *ecdsa.PrivateKey
	pub  *PublicKey
}

// LoadPrivateKey decodes a private key PEM — benchseal's or cosign's
// encrypted format, or unencrypted PKCS#8/EC — with password (nil and empty
// are the same). Only ECDSA P-256 keys are accepted.
func LoadPrivateKey(pemBytes, password []byte) (*Signer, error) {
	if password == nil {
		password = []byte{}
	}
	k, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, errcond.Errorf(ErrKeyNotOpened, "bad key: load private key (wrong password?): %w", err)
	}
	priv, ok := k.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, errcond.Errorf(ErrKey, "bad key: only ECDSA P-256 private keys are supported")
	}
	return NewSigner(priv)
}

// NewSigner wraps an in-memory ECDSA P-256 key.
func NewSigner(priv *ecdsa.PrivateKey) (*Signer, error) {
	pub, err := NewPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Signer{priv: priv, pub: pub}, nil
}

// Public returns the signer's public key.
func (s *Signer) Public() *PublicKey { return s.pub }

// GetHashAlgorithm implements sign.Keypair.
func (s *Signer) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

// GetSigningAlgorithm implements sign.Keypair.
func (s *Signer) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

// GetHint implements sign.Keypair: std-base64 of SHA-256 of the PKIX DER,
// as cosign and sigstore-go write it.
func (s *Signer) GetHint() []byte { return []byte(s.pub.Hint()) }

// GetKeyAlgorithm implements sign.Keypair.
func (s *Signer) GetKeyAlgorithm() string { return "ECDSA" }

// GetPublicKey implements sign.Keypair.
func (s *Signer) GetPublicKey() crypto.PublicKey { return s.pub.key }

// GetPublicKeyPem implements sign.Keypair.
func (s *Signer) GetPublicKeyPem() (string, error) { return string(s.pub.PEM()), nil }

// SignData implements sign.Keypair: it signs SHA-256(data).
func (s *Signer) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sv, err := signature.LoadECDSASignerVerifier(s.priv, crypto.SHA256)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(data)
	sig, err := sv.SignMessage(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	return sig, sum[:], nil
}

// PublicKey is a pinned ECDSA P-256 verification key.
type PublicKey struct {
	key *ecdsa.PublicKey
	der []byte
}

// ParsePublicKey decodes a PKIX "PUBLIC KEY" PEM (benchseal's or cosign's
// .pub). Only ECDSA P-256 keys are accepted.
func ParsePublicKey(pemBytes []byte) (*PublicKey, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errcond.Errorf(ErrKey, "bad key: not a PEM \"PUBLIC KEY\"")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errcond.Errorf(ErrKey, "bad key: trailing data after the public key")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, errcond.Errorf(ErrKey, "bad key: %w", err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errcond.Errorf(ErrKey, "bad key: only ECDSA P-256 public keys are supported")
	}
	return NewPublicKey(ek)
}

// NewPublicKey wraps an ECDSA P-256 public key.
func NewPublicKey(k *ecdsa.PublicKey) (*PublicKey, error) {
	if k.Curve != elliptic.P256() {
		return nil, errcond.Errorf(ErrKey, "bad key: only ECDSA P-256 keys are supported")
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, errcond.Errorf(ErrKey, "bad key: %w", err)
	}
	return &PublicKey{key: k, der: der}, nil
}

// Key returns the crypto key.
func (p *PublicKey) Key() *ecdsa.PublicKey { return p.key }

// PEM returns the PKIX PEM encoding.
func (p *PublicKey) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: p.der})
}

// Fingerprint returns "sha256:" and the hex SHA-256 of the PKIX DER.
func (p *PublicKey) Fingerprint() string {
	s := sha256.Sum256(p.der)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Hint returns the Sigstore bundle public-key hint: std-base64 of the
// SHA-256 of the PKIX DER. A hint is never trusted, only used to label.
func (p *PublicKey) Hint() string {
	s := sha256.Sum256(p.der)
	return base64.StdEncoding.EncodeToString(s[:])
}

// Verifier returns a sigstore signature verifier for the key (SHA-256).
func (p *PublicKey) Verifier() (signature.Verifier, error) {
	return signature.LoadECDSAVerifier(p.key, crypto.SHA256)
}

// HintFingerprint turns a Sigstore hint (base64 SHA-256 of a PKIX DER) into
// the Fingerprint form, or returns "" when it is not one.
func HintFingerprint(hint string) string {
	b, err := base64.StdEncoding.DecodeString(hint)
	if err != nil || len(b) != sha256.Size {
		return ""
	}
	return "sha256:" + hex.EncodeToString(b)
}
