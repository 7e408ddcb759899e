package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// replay answers a damaged bundle or a directory that is no run with exit
// 3, naming the path, as validate, verify and inspect do (it answered 1,
// an operational failure, before).
func TestReplayDamagedInputExits3(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "emptyd")
	os.Mkdir(empty, 0o755)
	tampered := artifacttest.PackRun(t, filepath.Join(dir, "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(tampered)
	if err != nil {
		t.Fatal(err)
	}
	l := b.RecordLayers()[0]
	b.Close()
	blob := filepath.Join(tampered, "blobs", "sha256", l.Descriptor.Digest.Encoded())
	data, _ := os.ReadFile(blob)
	data[len(data)/2] ^= 0xff
	os.WriteFile(blob, data, 0o644)
	for _, p := range []string{empty, tampered} {
		var out, errOut bytes.Buffer
		if code := Main([]string{"replay", p}, strings.NewReader(""), &out, &errOut); code != ExitRejected {
			t.Errorf("replay %s: exit %d, want %d: %s", p, code, ExitRejected, errOut.String())
		}
		if !strings.Contains(errOut.String(), p) && !strings.Contains(errOut.String(), l.Title) {
			t.Errorf("replay %s: stderr %q names neither the path nor the layer", p, errOut.String())
		}
	}
}
