package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/benchseal/benchseal/redact"
	"github.com/benchseal/benchseal/schema"
)

// Redact returns files with every credential (Authorization headers,
// Bearer tokens, api_key/token/secret fields, sk-…/hf_… keys) replaced by
// redact.Mask, before anything is parsed or kept, and a warning per file
// that had any. A redacted file records the SHA-256 of the bytes as given
// and where the credentials were (line and kind), so that
// manifest.source.files describes the kept, redacted bytes and says so.
func Redact(files []File) ([]File, []string) {
	out := make([]File, len(files))
	var warnings []string
	for i, f := range files {
		out[i] = f
		data, found := redact.Bytes(f.Data)
		if len(found) == 0 {
			continue
		}
		sum := sha256.Sum256(f.Data)
		out[i].Data = data
		out[i].OriginalSHA256 = hex.EncodeToString(sum[:])
		out[i].Redactions = out[i].Redactions[:0]
		lines := make([]string, 0, len(found))
		for _, r := range found {
			out[i].Redactions = append(out[i].Redactions, schema.Redaction{Line: r.Line, Kind: r.Kind})
			lines = append(lines, fmt.Sprintf("line %d (%s)", r.Line, r.Kind))
		}
		warnings = append(warnings, fmt.Sprintf("%s: %d credential(s) redacted before keeping the file: %s; manifest.source.files lists the original's SHA-256", path.Base(f.Name), len(found), strings.Join(lines, ", ")))
	}
	return out, warnings
}
