package cli

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// checkBundleArg says plainly what is wrong when path, given where a
// bundle is expected, is not one at all: missing (error), a run directory
// that was never packed, or a file that is no tar archive (usage errors).
// Anything that looks like a bundle passes, to be checked in full by the
// library (a damaged bundle is rejected there, exit 3).
func checkBundleArg(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return statError(path, err, "want a bundle: a directory or .tar made by benchseal pack")
	}
	if fi.IsDir() {
		if isRunDir(path) {
			out := strings.TrimRight(path, "/") + ".oci.tar"
			return usagef("%s is a run directory, not a bundle: pack it first (benchseal pack %s --out %s)", path, path, out)
		}
		if !hasLayoutPart(path) {
			// Rejected (exit 3) as a damaged input is: given where a
			// bundle is read, it is one with every part missing.
			return rejected(fmt.Errorf("%s is neither a run directory (no %s) nor a bundle (no oci-layout, index.json or blobs/): give a run directory made by capture, import or synth, or a bundle made by benchseal pack", path, schema.ManifestFile))
		}
		return nil
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var head [512]byte
	n, _ := io.ReadFull(f, head[:])
	if looksLikeTar(head[:n]) {
		return nil
	}
	hint := ""
	if strings.HasSuffix(path, artifact.SuffixSignature) {
		hint = fmt.Sprintf("; it is a signature file, give the bundle it belongs to (%s)", signedBundlePath(path))
	}
	return usagef("%s is not a bundle: neither a tar archive nor an OCI layout directory (make one with benchseal pack)%s", path, hint)
}

// keyIDSuffix is the ".<key id>" a later signer's detached file carries
// (artifact.DetachedPathFor).
var keyIDSuffix = regexp.MustCompile(`\.[0-9a-f]{16}$`)

// signedBundlePath returns the bundle a detached signature or attestation
// file belongs to.
func signedBundlePath(p string) string {
	p = strings.TrimSuffix(p, artifact.SuffixSignature)
	p = strings.TrimSuffix(p, ".attestation")
	return keyIDSuffix.ReplaceAllString(p, "")
}

// checkRunDirArg says plainly what is wrong when path, given where a run
// directory is expected, is missing (error) or is a file or a bundle
// (usage errors).
func checkRunDirArg(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return statError(path, err, "want a run directory holding manifest.json")
	}
	if !fi.IsDir() {
		return usagef("%s is not a run directory (want a directory holding %s; to check a bundle use benchseal verify)", path, schema.ManifestFile)
	}
	if _, err := os.Stat(filepath.Join(path, "oci-layout")); err == nil {
		return usagef("%s is a bundle, not a run directory: check it with benchseal verify", path)
	}
	return nil
}

// statError names path and the plain cause of a failed stat, with what
// was wanted when the path does not exist.
func statError(path string, err error, want string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such file or directory (%s)", path, want)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// archiveExts are names of archive formats a bundle is not written as.
var archiveExts = []string{".zip", ".tgz", ".gz", ".zst", ".tzst", ".xz", ".bz2", ".7z", ".rar", ".jar"}

// checkBundleOut refuses an output name that looks like an archive format
// benchseal does not write: a bundle is a directory or a .tar file, and
// any other name would silently become a directory.
func checkBundleOut(out string) error {
	ext := strings.ToLower(filepath.Ext(out))
	for _, a := range archiveExts {
		if ext == a {
			return usagef("--out %s: a bundle is written as a directory (any name not ending in .tar, e.g. run.oci) or a .tar file (e.g. run.oci.tar), not %s", out, a)
		}
	}
	return nil
}

// hasLayoutPart reports whether dir holds any part of an OCI layout (the
// oci-layout file, index.json or blobs/): such a directory is checked as a
// bundle, and one missing a part is rejected by the verifier by name.
func hasLayoutPart(dir string) bool {
	for _, name := range []string{"oci-layout", "index.json", "blobs"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// isRunDir reports whether dir holds a run (a manifest.json) rather than
// an OCI layout (an oci-layout file).
func isRunDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err == nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, schema.ManifestFile))
	return err == nil
}

// looksLikeTar reports whether head (the first up to 512 bytes of a file)
// parses as a tar header or carries the ustar magic; a damaged tar still
// counts, so the verifier can reject it by name.
func looksLikeTar(head []byte) bool {
	if len(head) < 512 {
		return false
	}
	if bytes.Equal(head[257:262], []byte("ustar")) {
		return true
	}
	_, err := tar.NewReader(bytes.NewReader(head)).Next()
	return err == nil || errors.Is(err, io.ErrUnexpectedEOF)
}
