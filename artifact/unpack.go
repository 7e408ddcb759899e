package artifact

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/benchseal/benchseal/schema"
)

// Unpack writes the run held by the bundle as a new run directory at
// dest: manifest.json and claims.json as stored, workload.jsonl and
// records.jsonl decompressed (the records shards concatenated in manifest
// order), and each attachment under attachments/. Every stored and
// uncompressed digest and size is checked against the run manifest Open
// read as the bytes stream. The directory is built beside dest
// and renamed into place only when complete; dest must not exist.
//
// Unpack checks integrity, not authenticity: verify the same opened
// bundle (verify.Verifier.VerifyBundle) before trusting what it unpacks.
func (b *Bundle) Unpack(ctx context.Context, dest string) error {
	sd, err := schema.NewStagedDir(dest)
	if err != nil {
		return err
	}
	defer sd.Discard()
	records, err := createIn(sd, schema.RecordsFile)
	if err != nil {
		return err
	}
	defer records.Close()
	for _, l := range b.Layers() {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch l.Kind {
		case KindManifest:
			err = copyLayer(b, l, sd, schema.ManifestFile)
		case KindClaims:
			err = copyLayer(b, l, sd, schema.ClaimsFile)
		case KindWorkload:
			err = copyLayer(b, l, sd, schema.WorkloadFile)
		case KindAttachment:
			// Titles were checked by Open: attachments/<relative path>,
			// no "..", no absolute path.
			err = copyLayer(b, l, sd, l.Title)
		case KindRecords:
			err = appendLayer(b, l, records)
		default:
			err = fmt.Errorf("unpack %s: layer %s of kind %q", b.path, l.Descriptor.Digest, l.Kind)
		}
		if err != nil {
			return err
		}
	}
	if err := records.Close(); err != nil {
		return err
	}
	return sd.Publish(false)
}

// createIn creates rel inside the staged directory.
func createIn(sd *schema.StagedDir, rel string) (*os.File, error) {
	p := sd.Join(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

// copyLayer writes the uncompressed content of l to rel.
func copyLayer(b *Bundle, l Layer, sd *schema.StagedDir, rel string) error {
	f, err := createIn(sd, rel)
	if err != nil {
		return fmt.Errorf("unpack %s: %w", l.Title, err)
	}
	if err := appendLayer(b, l, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendLayer streams the uncompressed content of l to w; a digest or
// size mismatch stops it with an *Error.
func appendLayer(b *Bundle, l Layer, w io.Writer) error {
	rc, err := b.OpenLayer(l)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("unpack %s: %w", l.Title, err)
	}
	return nil
}
