package artifact_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// TestReadAttachmentRefusesOneOverTheCap: Bundle.ReadAttachment, the
// reader verify's import, server-evidence and trace checks use, refuses
// an attachment whose descriptor declares more than
// schema.MaxAttachmentSize bytes before reading any of it, with an error
// naming the attachment and the cap.
func TestReadAttachmentRefusesOneOverTheCap(t *testing.T) {
	const name = "notes/readme.txt"
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	read := func() ([]byte, error) {
		t.Helper()
		b, err := artifact.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		return b.ReadAttachment(name)
	}
	if data, err := read(); err != nil || string(data) != "attachment bytes\n" {
		t.Fatalf("within the cap: %q, %v", data, err)
	}
	// The attachment's blob grows past the cap, sparse (no disk is used),
	// its descriptor saying so: Open checks each blob's size against its
	// descriptor, not its digest (verify's descriptor check hashes it).
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var blob string
	for _, l := range b.Layers() {
		if l.Title == schema.AttachmentsDir+"/"+name {
			blob = filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded())
		}
	}
	b.Close()
	if blob == "" {
		t.Fatalf("no layer %s", name)
	}
	artifacttest.EditLayout(t, p, nil, func(m map[string]any) {
		for _, l := range m["layers"].([]any) {
			l := l.(map[string]any)
			if strings.HasSuffix(blob, strings.TrimPrefix(l["digest"].(string), "sha256:")) {
				l["size"] = schema.MaxAttachmentSize + 1
			}
		}
	})
	if err := os.Truncate(blob, schema.MaxAttachmentSize+1); err != nil {
		t.Fatal(err)
	}
	data, err := read()
	want := "attachment " + name + ": larger than 1073741824 bytes"
	if err == nil || err.Error() != want || data != nil {
		t.Fatalf("over the cap: %d bytes, err %v, want %q", len(data), err, want)
	}
}
