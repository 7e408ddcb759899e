package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/benchseal/benchseal/schema"
)

// WriteOptions are the publisher's additions to an import.
type WriteOptions struct {
	// Overlay is a partial manifest (JSON) merged over the generated one.
	Overlay []byte
	// Set holds "dotted.path=value" assignments applied after Overlay.
	Set []string
	// Compress writes records.jsonl.zst instead of records.jsonl.
	Compress bool
	// Importer, when set, is stated as manifest.source.importer: the
	// build of the benchseal that imports (internal/buildinfo).
	Importer *schema.Build
}

// RunID returns a stable run id for an import of files by tool: the tool
// name and the first 16 hex digits of the SHA-256 over the files' names
// and digests.
func RunID(tool string, files []File) string {
	h := sha256.New()
	for _, f := range files {
		s := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "%s\x00%x\n", path.Base(f.Name), s)
	}
	return "import-" + tool + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Finish completes a parsed result before writing: it applies the
// overlay and --set assignments, sets the run id when empty, records the
// original files (name, SHA-256, size) in manifest.source.files, and
// recomputes manifest.unknown, then validates the whole result in memory
// (Check).
func Finish(res *Result, tool string, files []File, opts WriteOptions) error {
	if err := finishManifest(res, tool, files, opts); err != nil {
		return err
	}
	return invalidRun(Check(res), opts)
}

// finishManifest is Finish without the validation: FromFiles, then the
// publisher's overlay.
func finishManifest(res *Result, tool string, files []File, opts WriteOptions) error {
	if err := FromFiles(res, tool, files); err != nil {
		return err
	}
	res.Manifest.Source.Importer = opts.Importer
	if len(opts.Overlay) > 0 || len(opts.Set) > 0 {
		if err := ApplyOverlay(&res.Manifest, opts.Overlay, opts.Set); err != nil {
			return err
		}
	}
	if err := unstatedConcurrency(&res.Manifest); err != nil {
		return badInput{err}
	}
	return nil
}

// invalidRun wraps a validation error of the finished run (nil stays
// nil); without an overlay it is bad input, as nothing but the files made
// the run.
func invalidRun(err error, opts WriteOptions) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("imported run is not valid: %w", err)
	if len(opts.Overlay) == 0 && len(opts.Set) == 0 {
		err = badInput{err}
	}
	return err
}

// FromFiles completes a parsed result with everything an import derives
// from the files alone, before the publisher's overlay: the run id when
// empty, manifest.source.files (name, SHA-256, size of the kept bytes),
// peak concurrency, warmup, undated times and manifest.unknown. It is a
// deterministic function of the files, which verify relies on when it
// re-derives an imported run from its attachments.
func FromFiles(res *Result, tool string, files []File) error {
	m := &res.Manifest
	if m.RunID == "" {
		m.RunID = RunID(tool, files)
	}
	if m.Source == nil {
		m.Source = &schema.Source{Tool: tool}
	}
	m.Source.Files = m.Source.Files[:0]
	seen := map[string]bool{}
	for _, f := range files {
		name := path.Base(f.Name)
		if seen[name] {
			return fmt.Errorf("import %s: two input files are named %s", tool, name)
		}
		seen[name] = true
		sum := sha256.Sum256(f.Data)
		m.Source.Files = append(m.Source.Files, schema.SourceFile{Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f.Data)),
			OriginalSHA256: f.OriginalSHA256, Redactions: f.Redactions})
	}
	sort.Slice(m.Source.Files, func(i, j int) bool { return m.Source.Files[i].Name < m.Source.Files[j].Name })
	facts := factsOf(res)
	fillPeakConcurrency(res, facts)
	fillWarmup(res, facts)
	if m.EpochUnixNS <= 0 {
		// The files do not say when the run took place: declared unknown,
		// never invented.
		m.EpochUnixNS, m.StartTime, m.FinishTime = 0, "", ""
		for _, f := range timeFields {
			if !m.Declared(f) {
				m.Unknown = append(m.Unknown, f)
			}
		}
		Derive(m, "epoch_unix_ns, start_time, finish_time: the files do not say when the run took place; declared unknown (set them with --set epoch_unix_ns=NS --set start_time=RFC3339 --set finish_time=RFC3339)")
	}
	return FillUnknown(m)
}

// Write writes res, whose records are in memory, as a run directory at
// dest, with the original files byte-for-byte under attachments/, as
// WriteStream does. On any error nothing is left at dest.
func Write(dest, tool string, files []File, res *Result, opts WriteOptions) error {
	_, err := WriteStream(dest, tool, files, func([]File, RecordFunc) (*Result, error) { return res, nil }, opts)
	return err
}

// badInput marks an error caused by the input files alone.
type badInput struct{ err error }

func (e badInput) Error() string   { return e.err.Error() }
func (e badInput) Unwrap() []error { return []error{e.err, ErrBadInput} }

// timeFields are the manifest's times, declared unknown together when the
// files do not date the run.
var timeFields = []string{"epoch_unix_ns", "start_time", "finish_time"}

// ErrNoFiles is returned when an import is given no input file.
var ErrNoFiles = errors.New("no input file")
