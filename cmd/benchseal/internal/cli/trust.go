package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/spf13/pflag"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/verify"
)

// trustFlags are the flags that say whom verify trusts as the publisher:
// pinned keys and/or one keyless identity (cosign's flag names), with the
// Sigstore trusted root keyless signatures are checked against.
type trustFlags struct {
	keys           []string
	identity       string
	identityRegexp string
	issuer         string
	issuerRegexp   string
	trustedRoot    string
	ignoreSCT      bool
}

func (t *trustFlags) bind(f *pflag.FlagSet, keyFlag, keyUsage string) {
	f.StringArrayVar(&t.keys, keyFlag, nil, keyUsage)
	f.StringVar(&t.identity, "certificate-identity", "", "keyless publisher: the certificate's subject alternative name (e.g. an email or a workflow URI)")
	f.StringVar(&t.identityRegexp, "certificate-identity-regexp", "", "keyless publisher: a regular expression the certificate's SAN must match")
	f.StringVar(&t.issuer, "certificate-oidc-issuer", "", "keyless publisher: the certificate's OIDC issuer (e.g. https://token.actions.githubusercontent.com)")
	f.StringVar(&t.issuerRegexp, "certificate-oidc-issuer-regexp", "", "keyless publisher: a regular expression the OIDC issuer must match")
	f.StringVar(&t.trustedRoot, "trusted-root", "", "Sigstore trusted_root.json (Fulcio CAs, Rekor keys, CT logs, TSAs) for keyless signatures; read offline, nothing is fetched")
	f.BoolVar(&t.ignoreSCT, "insecure-ignore-sct", false, "UNSAFE: accept keyless certificates without a signed certificate timestamp")
}

// files are the files the trust flags name (keys and the trusted root).
func (t *trustFlags) files() []string {
	return append([]string{t.trustedRoot}, t.keys...)
}

// identityGiven reports whether any keyless identity flag is set.
func (t *trustFlags) identityGiven() bool {
	return t.identity != "" || t.identityRegexp != "" || t.issuer != "" || t.issuerRegexp != ""
}

// build reads the keys and the trusted root and returns them with the
// verifier options they imply.
func (t *trustFlags) build() ([]*artifact.PublicKey, []verify.Option, error) {
	var keys []*artifact.PublicKey
	for _, p := range t.keys {
		k, err := readPublicKey("--key", p)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
	}
	var opts []verify.Option
	if t.trustedRoot != "" {
		tr, err := root.NewTrustedRootFromPath(t.trustedRoot)
		if err != nil {
			return nil, nil, fmt.Errorf("--trusted-root %s: %w", t.trustedRoot, err)
		}
		opts = append(opts, verify.WithTrustedRoot(tr))
	}
	if t.identityGiven() {
		id := verify.Identity{SAN: t.identity, SANRegexp: t.identityRegexp, Issuer: t.issuer, IssuerRegexp: t.issuerRegexp}
		if err := id.Validate(); err != nil {
			return nil, nil, usagef("%v", err)
		}
		if t.trustedRoot == "" {
			return nil, nil, usagef("a keyless identity needs --trusted-root")
		}
		opts = append(opts, verify.WithIdentities(id))
	}
	if t.ignoreSCT {
		opts = append(opts, verify.WithoutSCTUnsafe())
	}
	return keys, opts, nil
}

// readPublicKey reads the public key file p given to flag (--key,
// --require-attestation).
func readPublicKey(flag, p string) (*artifact.PublicKey, error) {
	b, err := readFileLimited(flag, p, 64<<10, `a public key (PEM "PUBLIC KEY")`)
	if err != nil {
		return nil, err
	}
	k, err := artifact.ParsePublicKey(b)
	if err != nil {
		if bytes.Contains(b, []byte("PRIVATE KEY-----")) {
			return nil, usagef("%s %s is a private key: verify takes the public key (%s.pub, written beside it by keygen)", flag, p, strings.TrimSuffix(p, filepath.Ext(p)))
		}
		return nil, fmt.Errorf("%s %s: %w", flag, p, err)
	}
	return k, nil
}

// parseReviewer reads a --require-attestation value: a public key file,
// or a keyless identity written IDENTITY@ISSUER_URL (split at the last
// "@https://" or "@http://"), e.g. reviewer@example.com@https://accounts.google.com.
func parseReviewer(v string) (verify.Signer, error) {
	if _, err := os.Stat(v); err == nil {
		k, err := readPublicKey("--require-attestation", v)
		if err != nil {
			return verify.Signer{}, err
		}
		return verify.Signer{Key: k}, nil
	}
	i := strings.LastIndex(v, "@https://")
	if j := strings.LastIndex(v, "@http://"); j > i {
		i = j
	}
	if i <= 0 {
		return verify.Signer{}, usagef("--require-attestation %q: neither a public key file nor IDENTITY@ISSUER_URL", v)
	}
	id := &verify.Identity{SAN: v[:i], Issuer: v[i+1:]}
	if err := id.Validate(); err != nil {
		return verify.Signer{}, usagef("--require-attestation %q: %v", v, err)
	}
	return verify.Signer{Identity: id}, nil
}

// readPlan decodes a plan file and its signature: sigPath, or
// PLAN.sigstore.json when it exists; nil signature when neither.
func readPlan(path, sigPath string) (*plan.Plan, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	p, err := plan.Decode(f, path)
	if err != nil {
		return nil, nil, err
	}
	if sigPath == "" {
		if _, err := os.Stat(artifact.DetachedPath(path)); err != nil {
			return p, nil, nil
		}
		sigPath = artifact.DetachedPath(path)
	}
	sig, err := readFileLimited("--plan-signature", sigPath, artifact.MaxSignatureBundleSize, sigstoreBundleWant)
	if err != nil {
		return nil, nil, err
	}
	return p, sig, nil
}
