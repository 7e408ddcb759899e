package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadPublicKeyNamesTheFlag checks that a file too large to be a key
// (a bundle given as --key) is refused naming the flag, the file and what
// belongs there, not only the size.
func TestReadPublicKeyNamesTheFlag(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fast.oci.tar")
	if err := os.WriteFile(p, bytes.Repeat([]byte{0}, 64<<10+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--key", "--require-attestation"} {
		_, err := readPublicKey(flag, p)
		want := flag + " " + p + `: over 65536 bytes: not a public key (PEM "PUBLIC KEY")`
		if err == nil || err.Error() != want {
			t.Errorf("readPublicKey(%q) = %v, want %q", flag, err, want)
		}
	}
}
