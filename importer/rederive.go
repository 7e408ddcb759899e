package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/mlperf"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrNotRederived is the root of every difference between an imported
// run and what its importer derives from the run's attached source files.
var ErrNotRederived = errors.New("imported run does not re-derive from its source files")

// AttachmentFunc returns the bytes of the attachment called name (a path
// relative to attachments/), or an error when the run has none.
type AttachmentFunc func(name string) ([]byte, error)

// Rederiver re-runs an imported run's importer on its attached source
// files. It implements verify's import check; the zero value is ready.
type Rederiver struct{}

// CheckImport calls CheckRederived.
func (Rederiver) CheckImport(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) error {
	return CheckRederived(ctx, run, attachment)
}

// CheckImportNotes calls CheckRederivedNotes.
func (Rederiver) CheckImportNotes(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) ([]string, error) {
	return CheckRederivedNotes(ctx, run, attachment)
}

// madeBeforeStrict reports whether run was imported by a release older
// than the rule that every claim and manifest field today's importer
// derives must be present: such a run names no importing build
// (manifest.source.importer, recorded from 6aee6c1 on) or its claims
// name no definitions version (named from 2026.12 on). Every release
// since dd7e2d5 writes both. Both are the publisher's word, so an import
// that omits them only turns an absent value into a printed note; a
// value present and different is a failure under any version.
func madeBeforeStrict(m *schema.Manifest, cl *schema.Claims) bool {
	return m.Source.Importer == nil || (cl != nil && cl.DefinitionsVersion == "")
}

// CheckRederived requires an imported run (schema.Manifest.Imported) to be exactly what
// its importer derives from the source files the manifest pins: the tool
// must be known, every file in manifest.source.files must be attached
// with its SHA-256 and size, and re-importing them (without the
// publisher's overlay) must give every record byte for byte (orig
// included, no record more or less), manifest.evidence and provenance
// exactly, and every value the importer sets in manifest.source,
// manifest.external (less what MLPerf reads from directory names),
// manifest.load (points, counts, warmup, repeats) and manifest.gpu_metrics
// (accelerator scrapes converted from the tool's telemetry). Manifest fields the
// importer leaves unset (hardware, engine, …) are the publisher's and are
// not compared. A run that is not imported passes. Every failure wraps
// ErrNotRederived and names the field or record. Notes are not failures:
// see CheckRederivedNotes.
func CheckRederived(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) error {
	_, err := CheckRederivedNotes(ctx, run, attachment)
	return err
}

// CheckRederivedNotes is CheckRederived, and also returns a note for each
// claim or manifest.external field today's importer derives that a run
// imported by an older release (madeBeforeStrict) lacks: that release did
// not derive it, so its absence contradicts nothing. In a run made by a
// release that writes both markers an absent one is a failure.
func CheckRederivedNotes(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) ([]string, error) {
	m := run.Manifest()
	if !m.Imported() {
		return nil, nil
	}
	var notes []string
	err := checkRederived(ctx, run, attachment, &notes)
	return notes, err
}

// checkRederived is CheckRederivedNotes's body; notes collects the notes.
func checkRederived(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error), notes *[]string) error {
	m := run.Manifest()
	fail := func(format string, args ...any) error {
		return errcond.Errorf(ErrNotRederived, "imported run does not re-derive from its source files: %s", fmt.Sprintf(format, args...))
	}
	if m.Source == nil || m.Source.Tool == "" {
		return fail("manifest.source.tool: an imported run must name the tool it was imported from")
	}
	im, ok := Lookup(m.Source.Tool)
	if !ok || im.Tool != m.Source.Tool {
		return fail("manifest.source.tool: unknown tool %q (known: %s)", m.Source.Tool, strings.Join(Tools(), ", "))
	}
	if len(m.Source.Files) == 0 {
		return fail("manifest.source.files: no source file is pinned, so nothing can be re-derived")
	}
	files := make([]ingest.File, 0, len(m.Source.Files))
	for i, sf := range m.Source.Files {
		data, err := attachment(sf.Name)
		if err != nil {
			return fail("manifest.source.files[%d] (%s): the source file is not attached: %v", i, sf.Name, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != sf.SHA256 || int64(len(data)) != sf.Size {
			return fail("manifest.source.files[%d] (%s): attachment has sha256 %s and %d bytes, the manifest pins %s and %d", i, sf.Name, got, len(data), sf.SHA256, sf.Size)
		}
		// The attachment holds the kept (already redacted) bytes; the
		// redaction record is carried over as stated.
		files = append(files, ingest.File{Name: sf.Name, Data: data, OriginalSHA256: sf.OriginalSHA256, Redactions: sf.Redactions})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The re-imported records are kept as the hash of their canonical
	// encoding per id (about 100 bytes a record), never all in memory.
	want := map[string][sha256.Size]byte{}
	facts := &ingest.RecordFacts{}
	var buf []byte
	res, err := im.Stream(files, func(rec *schema.Record) error {
		facts.Add(rec)
		var err error
		if buf, err = schema.AppendRecord(buf[:0], rec); err != nil {
			return fmt.Errorf("record %s: %w", rec.ID, err)
		}
		want[rec.ID] = sha256.Sum256(buf)
		return nil
	})
	if err != nil {
		return fail("re-import with %s: %v", im.Tool, err)
	}
	res.Facts = facts
	if err := ingest.FromFiles(res, im.Tool, files); err != nil {
		return fail("re-import with %s: %v", im.Tool, err)
	}
	wantM := &res.Manifest
	if m.Evidence != wantM.Evidence {
		return fail("manifest.evidence: %q, the %s importer derives %q", m.Evidence, im.Tool, wantM.Evidence)
	}
	if err := sameJSON("manifest.provenance", wantM.Provenance, m.Provenance, true); err != nil {
		return fail("%v", err)
	}
	// The MLPerf importer also reads the submission's directory names
	// (division, submitter, system), which attachments do not keep: those
	// are the publisher's word; every value the log files give must match.
	older := madeBeforeStrict(m, run.Claims())
	var absent func(path string, want any)
	if older {
		absent = func(path string, want any) {
			*notes = append(*notes, fmt.Sprintf("today's %s importer also derives %s = %s from the attached files; this bundle, made by an older importer, does not state it", im.Tool, path, short(want)))
		}
	}
	if err := sameJSONAbsent("manifest.external", logFields(wantM.External), logFields(m.External), absent); err != nil {
		return fail("%v", err)
	}
	// source.derived is prose (and names path-derived MLPerf fields) and
	// source.importer the publisher's word on which benchseal imported
	// (no attachment holds it); the tool, version and pinned files must
	// match.
	ws, gs := *wantM.Source, *m.Source
	ws.Derived, gs.Derived = nil, nil
	ws.Importer, gs.Importer = nil, nil
	if err := sameJSON("manifest.source", ws, gs, false); err != nil {
		return fail("%v", err)
	}
	if err := sameJSON("manifest.load", wantM.Load, m.Load, false); err != nil {
		return fail("%v", err)
	}
	// Accelerator scrapes an import converts from the tool's telemetry
	// (their sha256s included: artifact checks the stored files against
	// them) are the file's, not the publisher's.
	if err := sameJSON("manifest.gpu_metrics", wantM.GPUMetrics, m.GPUMetrics, true); err != nil {
		return fail("%v", err)
	}
	if err := sameClaims(res.Claims, run.Claims(), older, notes); err != nil {
		return fail("%v", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sameRecords(ctx, run, want, func(id string) []byte { return reimported(im.Stream, files, id) }, fail)
}

// sameClaims requires every claim the importer derives from the tool's
// files (the tool's own figures) to be in the run's claims with the same
// value, definitions and not-recomputable mark, whatever definitions
// version either names: the tool's file is the evidence for them, so a
// claim it contradicts is never left to a recomputation. Claims the
// importer does not derive are the publisher's and are recomputed like
// any other. When older (madeBeforeStrict), a derived claim the run lacks
// is a note, not a failure: the release that made it did not derive it.
func sameClaims(want, got *schema.Claims, older bool, notes *[]string) error {
	if want == nil {
		return nil
	}
	if got == nil {
		return fmt.Errorf("%s: absent, the importer derives %d point(s) of claims from the tool's files", schema.ClaimsFile, len(want.Points))
	}
	if got.Definitions != want.Definitions {
		return fmt.Errorf("%s: definitions is %q, the importer derives %q", schema.ClaimsFile, got.Definitions, want.Definitions)
	}
	type key struct {
		point, metric string
		repeat        int
	}
	var lacked []string
	defer func() {
		if n := len(lacked); n > 0 {
			more := ""
			if len(lacked) > 5 {
				more = fmt.Sprintf(" and %d more", len(lacked)-5)
				lacked = lacked[:5]
			}
			*notes = append(*notes, fmt.Sprintf("today's importer also derives %d claim(s) from the attached files that this bundle, made by an older importer, does not claim (%s%s); they are not verified", n, strings.Join(lacked, ", "), more))
		}
	}()
	held := map[key]schema.Claim{}
	for _, pc := range got.Points {
		for _, c := range pc.Metrics {
			held[key{pc.Point, c.Metric, repeatOf(pc.Repeat)}] = c
		}
	}
	for _, pc := range want.Points {
		for _, w := range pc.Metrics {
			k := key{pc.Point, w.Metric, repeatOf(pc.Repeat)}
			g, ok := held[k]
			switch {
			case !ok && older:
				lacked = append(lacked, fmt.Sprintf("%s %s = %s", k.point, k.metric, digits.Shortest(w.Value)))
			case !ok:
				return fmt.Errorf("%s: point %q repeat %d %s: absent, the importer derives %s from the tool's files", schema.ClaimsFile, k.point, k.repeat, k.metric, digits.Shortest(w.Value))
			case g.Value != w.Value:
				return fmt.Errorf("%s: point %q repeat %d %s: claimed %s, the tool's files give %s", schema.ClaimsFile, k.point, k.repeat, k.metric, digits.Shortest(g.Value), digits.Shortest(w.Value))
			case g.NotRecomputable == "" && w.NotRecomputable != "" && older:
				*notes = append(*notes, fmt.Sprintf("today's importer marks %s point %q repeat %d %s not recomputable (%s); this bundle, made by an older importer, does not", schema.ClaimsFile, k.point, k.repeat, k.metric, w.NotRecomputable))
			case g.NotRecomputable != w.NotRecomputable:
				return fmt.Errorf("%s: point %q repeat %d %s: not_recomputable is %q, the importer derives %q", schema.ClaimsFile, k.point, k.repeat, k.metric, g.NotRecomputable, w.NotRecomputable)
			}
		}
	}
	return nil
}

// repeatOf is a claim's repeat (0 when unset, as claim paths resolve it).
func repeatOf(r *int) int {
	if r == nil {
		return 0
	}
	return *r
}

// reimported returns the canonical encoding of the last record with id
// that stream emits from files (the one a hash in sameRecords's want
// stands for), to show it in an error.
func reimported(stream ingest.StreamFunc, files []ingest.File, id string) []byte {
	var out []byte
	_, _ = stream(files, func(rec *schema.Record) error {
		if rec.ID == id {
			out, _ = schema.AppendRecord(out[:0], rec)
		}
		return nil
	})
	return out
}

// sameRecords requires the run's records to be exactly those whose
// canonical encodings hash to want (by id), byte for byte, in any order.
// show returns the re-imported record of an id, for the error.
func sameRecords(ctx context.Context, run schema.Run, want map[string][sha256.Size]byte, show func(id string) []byte, fail func(string, ...any) error) error {
	it, err := run.OpenRecords()
	if err != nil {
		return err
	}
	defer it.Close()
	seen := make(map[string]bool, len(want))
	var buf []byte
	for n := 0; ; n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		w, ok := want[rec.ID]
		if !ok {
			return fail("record %q: the source files hold no such request", rec.ID)
		}
		if seen[rec.ID] {
			return fail("record %q: stored twice", rec.ID)
		}
		seen[rec.ID] = true
		buf, err = schema.AppendRecord(buf[:0], rec)
		if err != nil {
			return fail("record %q: %v", rec.ID, err)
		}
		if sha256.Sum256(buf) != w {
			return fail("record %q differs from the one its source file gives: stored %s, re-imported %s", rec.ID, clip(buf), clip(show(rec.ID)))
		}
	}
	if len(seen) != len(want) {
		var missing []string
		for id := range want {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		sort.Strings(missing)
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return fail("%d request(s) of the source files have no record: %s%s", len(want)-len(seen), strings.Join(missing, ", "), more)
	}
	return nil
}

func clip(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// sameJSON compares want (what the importer derives) with got (what the
// run holds) through their JSON encodings. exact requires equality;
// otherwise every value want sets must be in got with the same value
// (objects may hold more keys, which the publisher's overlay filled in),
// lists must have the same length, and a zero scalar in want is unset).
func sameJSON(field string, want, got any, exact bool) error {
	return compareJSON(field, want, got, exact, nil)
}

// sameJSONAbsent is sameJSON with exact, except that an object key want
// sets and got lacks altogether is passed to absent (when non-nil) rather
// than failing (so is an empty string, which states nothing); a key got
// holds with another value still fails.
func sameJSONAbsent(field string, want, got any, absent func(path string, want any)) error {
	return compareJSON(field, want, got, true, absent)
}

func compareJSON(field string, want, got any, exact bool, absent func(path string, want any)) error {
	wv, err := toJSONValue(want)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	gv, err := toJSONValue(got)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return diff(field, wv, gv, exact, absent)
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

func diff(path string, want, got any, exact bool, absent func(path string, want any)) error {
	mismatch := func() error {
		return fmt.Errorf("%s is %s, the importer derives %s", path, short(got), short(want))
	}
	switch w := want.(type) {
	case nil:
		if exact && got != nil {
			return mismatch()
		}
		return nil
	case string, bool, json.Number:
		// In a subset comparison a zero value is one the importer left
		// unset (the overlay may fill it in).
		if !exact && (w == "" || w == false || w == json.Number("0")) {
			return nil
		}
		if !reflect.DeepEqual(want, got) {
			return mismatch()
		}
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return mismatch()
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		if exact {
			for k := range g {
				if _, ok := w[k]; !ok {
					keys = append(keys, k)
				}
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if absent != nil && olderLacks(w[k], g[k]) {
				absent(path+"."+k, w[k])
				continue
			}
			if err := diff(path+"."+k, w[k], g[k], exact, absent); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return mismatch()
		}
		for i := range w {
			if err := diff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], exact, absent); err != nil {
				return err
			}
		}
		return nil
	default:
		if !reflect.DeepEqual(want, got) {
			return mismatch()
		}
		return nil
	}
}

// olderLacks reports whether got, written by an older importer, lacks
// what want (today's importer) derives without contradicting it: absent,
// an empty string, or the first line of a multi-line value that today's
// importer keeps whole, its lines joined with a space (e4a355b: MLPerf
// summary values; the release before kept the first line only).
func olderLacks(want, got any) bool {
	if want == nil || want == "" {
		return false
	}
	if got == nil {
		return true
	}
	w, ws := want.(string)
	g, gs := got.(string)
	return ws && gs && (g == "" || strings.HasPrefix(w, g+" "))
}

func short(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	return clip(b)
}

// logFields returns refs without the fields read from directory names.
func logFields(refs []schema.ExternalRef) []schema.ExternalRef {
	out := make([]schema.ExternalRef, len(refs))
	for i, r := range refs {
		out[i] = mlperf.PathFields(r)
	}
	return out
}
