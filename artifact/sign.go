package artifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/schema"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
)

// Suffixes of the detached Sigstore bundles written beside a bundle: its
// signatures and its reviewer attestations.
const (
	SuffixSignature   = ".sigstore.json"
	SuffixAttestation = ".attestation.sigstore.json"
)

// DetachedPath returns where the detached Sigstore bundle of the bundle at
// path is written: path + ".sigstore.json" (the publisher's, from pack
// --key or the first sign; see DetachedPathFor for later signers).
func DetachedPath(path string) string {
	return strings.TrimRight(path, "/") + SuffixSignature
}

// DetachedPathFor returns where a new detached Sigstore bundle (suffix
// SuffixSignature or SuffixAttestation) by the key pub goes beside the
// bundle at path, so that no signer's detached file replaces another's:
// path + suffix when that file is absent or holds a signature by the same
// key (its public-key hint), else path + "." + the key's id (the first 16
// hex digits of its fingerprint) + suffix, and kept names the other
// signer's file left in place.
func DetachedPathFor(path, suffix string, pub *PublicKey) (dp, kept string) {
	base := strings.TrimRight(path, "/") + suffix
	if sameKeyDetached(base, pub) {
		return base, ""
	}
	id := strings.TrimPrefix(pub.Fingerprint(), "sha256:")
	return strings.TrimRight(path, "/") + "." + id[:16] + suffix, base
}

// sameKeyDetached tells whether the file at p is absent or a Sigstore
// bundle whose public-key hint is pub's. Anything else (another key, a
// keyless signature, a file that is not a Sigstore bundle) is kept.
func sameKeyDetached(p string, pub *PublicKey) bool {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSignatureBundleSize))
	if err != nil {
		return false
	}
	hint, ok := BundleKeyHint(data)
	return ok && hint == pub.Hint()
}

// BundleKeyHint reads the public-key hint of Sigstore bundle JSON, without
// checking anything it says (a hint only labels). ok is false when data is
// not strict JSON or holds no hint.
func BundleKeyHint(data []byte) (hint string, ok bool) {
	if schema.CheckJSON(data) != nil {
		return "", false
	}
	var sb struct {
		VerificationMaterial struct {
			PublicKey struct {
				Hint string `json:"hint"`
			} `json:"publicKey"`
		} `json:"verificationMaterial"`
	}
	if json.Unmarshal(data, &sb) != nil || sb.VerificationMaterial.PublicKey.Hint == "" {
		return "", false
	}
	return sb.VerificationMaterial.PublicKey.Hint, true
}

// SignResult describes a new signature.
type SignResult struct {
	// Referrer is the descriptor of the new referrer manifest.
	Referrer ocispec.Descriptor
	// SigstoreBundle is the Sigstore bundle JSON.
	SigstoreBundle []byte
	// DetachedPath is where the detached copy was written.
	DetachedPath string
	// KeptDetached, when set, is the detached file of another signer left
	// in place (DetachedPathFor), DetachedPath being this key's own.
	KeptDetached string
	// Fingerprint is the signing key's fingerprint.
	Fingerprint string
	// Reclaimed lists staging leftovers of killed runs that were removed.
	Reclaimed []schema.Reclaimed
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
// (subject = run manifest). Earlier signatures are kept. The change is
// atomic: a reader, a kill or a write error leaves either the old bundle
// or the new one. A directory is rebuilt in a staging directory beside it
// (its blobs hard-linked) and exchanged with it in one step (Linux
// renameat2 RENAME_EXCHANGE; elsewhere sign a tar instead); a tar is
// rewritten to a staging file and renamed. Staging leftovers of killed
// signs of the same path are removed first and listed in the result.
// Sign also writes the Sigstore bundle beside path, at
// DetachedPathFor(path, SuffixSignature, the key): another signer's
// detached file is never replaced.
func Sign(ctx context.Context, path string, s *Signer) (*SignResult, error) {
	path = filepath.Clean(path)
	reclaimed, err := schema.ReclaimStale(path)
	if err != nil {
		return nil, err
	}
	unlock, err := schema.LockPath(path)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", path, err)
	}
	defer unlock()
	b, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.CheckContent(ctx); err != nil {
		return nil, err
	}
	add, ib, res, err := b.newSignature(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := b.commit(ctx, path, add, ib); err != nil {
		return nil, err
	}
	res.Reclaimed = reclaimed
	dp, kept := DetachedPathFor(path, SuffixSignature, s.Public())
	if err := writeDetached(dp, res); err != nil {
		return nil, err
	}
	res.KeptDetached = kept
	return res, nil
}

// commit writes the new blobs add and the new index.json ib into the
// bundle atomically: a directory by exchange with a staged copy, a tar by
// a staged file and rename.
func (b *Bundle) commit(ctx context.Context, path string, add map[string][]byte, ib []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src := b.src
	if c, ok := src.(countingSource); ok {
		src = c.source
	}
	switch src := src.(type) {
	case *dirSource:
		if err := exchangeLayout(path, src, add, ib); err != nil {
			return fmt.Errorf("sign %s: %w", path, err)
		}
	case *tarSource:
		add[ocispec.ImageIndexFile] = ib
		mt, _ := parseCreated(b.created)
		if err := writeTarAtomic(path, src, add, mt, true); err != nil {
			return fmt.Errorf("sign %s: %w", path, err)
		}
	default:
		return fmt.Errorf("sign %s: unknown kind of bundle source %T", path, src)
	}
	return nil
}

// writeDetached writes the signature's Sigstore bundle to dp.
func writeDetached(dp string, res *SignResult) error {
	if err := schema.WriteFileAtomic(dp, res.SigstoreBundle, 0o644); err != nil {
		return fmt.Errorf("sign: write %s: %w", dp, err)
	}
	res.DetachedPath = dp
	return nil
}

// newSignature signs the statement of b and returns the blobs of the new
// referrer (by layout name) and the new index.json.
func (b *Bundle) newSignature(ctx context.Context, s *Signer) (map[string][]byte, []byte, *SignResult, error) {
	stmt, err := MarshalStatement(b.Statement())
	if err != nil {
		return nil, nil, nil, err
	}
	sb, err := SignStatement(ctx, stmt, s)
	if err != nil {
		return nil, nil, nil, err
	}
	add, ib, rd, err := b.referrerBlobs(sb, PredicateTypeRun)
	if err != nil {
		return nil, nil, nil, err
	}
	return add, ib, &SignResult{Referrer: rd, SigstoreBundle: sb, Fingerprint: s.pub.Fingerprint()}, nil
}

// writeLayoutFiles writes files (by layout name) into the staged layout,
// each synced; existing blobs are kept (content-addressed).
func (s *stage) writeLayoutFiles(files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n != ocispec.ImageIndexFile {
			if _, err := os.Lstat(s.sd.Join(n)); err == nil {
				continue
			}
		}
		step := "write blob"
		if n == ocispec.ImageIndexFile {
			step = "write index.json"
		}
		if err := fault(step); err != nil {
			return err
		}
		if err := s.sd.WriteFile(n, files[n]); err != nil {
			return err
		}
	}
	return nil
}

// exchangeLayout builds the signed layout in a staging directory beside
// path — the existing files hard-linked (copied where links fail), the new
// blobs and index.json written and synced — and exchanges it with path in
// one atomic step, then removes the old layout.
func exchangeLayout(path string, src *dirSource, add map[string][]byte, index []byte) error {
	st, err := newStage(path)
	if err != nil {
		return err
	}
	defer st.discard()
	for _, n := range src.names() {
		if n == ocispec.ImageIndexFile {
			continue
		}
		if err := fault("sign-link"); err != nil {
			return err
		}
		if err := linkOrCopy(filepath.Join(path, filepath.FromSlash(n)), filepath.Join(st.dir, filepath.FromSlash(n))); err != nil {
			return err
		}
	}
	files := map[string][]byte{ocispec.ImageIndexFile: index}
	for n, d := range add {
		files[n] = d
	}
	if err := st.writeLayoutFiles(files); err != nil {
		return err
	}
	if err := st.sd.Sync(); err != nil {
		return err
	}
	if err := fault("sign-exchange"); err != nil {
		return err
	}
	if err := schema.ExchangeDirs(st.dir, path); err != nil {
		return fmt.Errorf("%w (a directory bundle is signed by exchanging it with a signed copy; sign a .tar bundle on this system)", err)
	}
	// st.dir now holds the old layout; discard removes it.
	return schema.SyncDir(filepath.Dir(path))
}

// testFault, set by tests only, injects an error (a full disk, say) at a
// named step of pack and sign.
var testFault func(step string) error

func fault(step string) error {
	if testFault != nil {
		return testFault(step)
	}
	return nil
}

func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
// then every stored blob of each reproduction referrer,
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
		_, err = io.Copy(io.Discard, schema.ContextReader(ctx, rc))
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
	return b.CheckReproductions(ctx)
}

func parseCreated(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
