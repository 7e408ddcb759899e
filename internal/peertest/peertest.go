package peertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/importer"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// A Case is one peer tool's part of the contract: the facts of its
// importer that Run checks on its real fixture (schema.PeerTool.Fixture).
type Case struct {
	// Peer is the tool's registration (a tool with records).
	Peer *schema.PeerTool
	// FailedFirst returns the real fixture edited so that the first
	// record the import writes is a failed request without chunks, and
	// the overlay (import --set) the import then needs. Claims the edit
	// would falsify are dropped (the summary file left out, or the edited
	// file's summary keys made to agree), so that verify passes on an
	// honest run.
	FailedFirst func(testing.TB) ([]ingest.File, []string)
	// Canonical maps each canonical rate and count replay prints to what
	// it is against the number the tool itself published (its claim of
	// the same path in claims.json): Same, Null, Other or Restated.
	// docs/importers.md's table "Canonical numbers on the same real
	// outputs" states the same.
	Canonical map[string]string
	// Provenance maps a record quantity (schema.Field...) to the status
	// (schema.FieldMeasured, ...) the import's provenance block gives it.
	Provenance map[string]string
	// Windows is the number of tool windows the provenance block lists.
	Windows int
	// Imports maps each file the import of the real fixture writes
	// (records, manifest, claims) to its SHA-256 in hex: any change to
	// what the importer writes for the tool's real output shows here,
	// in the tool's own test. Run prints the map to paste when it
	// differs.
	Imports map[string]string
}

// Run checks c: the failed-first import verifies, the canonical numbers
// are as c.Canonical says, and the provenance block states what the tool
// measured. A Case missing any part fails.
func Run(t *testing.T, c Case) {
	if c.Peer == nil || !c.Peer.Records {
		t.Fatal("peertest.Case.Peer: the registration of a tool with records")
	}
	if im, ok := importer.Lookup(c.Peer.Name); !ok || im.Peer != c.Peer {
		t.Fatalf("no importer registered with schema's %s", c.Peer.Name)
	}
	if c.FailedFirst == nil {
		t.Error("no failed-first input (peertest.Case.FailedFirst)")
	} else {
		t.Run("FailedFirstRecordVerifies", func(t *testing.T) { failedFirstVerifies(t, c) })
	}
	if len(c.Canonical) == 0 {
		t.Error("no canonical outcomes (peertest.Case.Canonical)")
	} else {
		t.Run("CanonicalMetricsMatchTheToolOrAreNull", func(t *testing.T) { canonicalVersusTool(t, c) })
	}
	if len(c.Provenance) == 0 {
		t.Error("no provenance statuses (peertest.Case.Provenance)")
	} else {
		t.Run("DeclaresWhatItInvents", func(t *testing.T) { declaresWhatItInvents(t, c) })
	}
	t.Run("ImportIsUnchanged", func(t *testing.T) { importUnchanged(t, c) })
}

// importUnchanged: the files the import of the real fixture writes have
// the digests c.Imports states.
func importUnchanged(t *testing.T, c Case) {
	dir := importFixture(t, c.Peer).Path
	got := map[string]string{}
	for _, n := range []string{schema.RecordsFile, schema.ManifestFile, schema.ClaimsFile} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got[n] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	if maps.Equal(got, c.Imports) {
		return
	}
	var b strings.Builder
	b.WriteString("Imports: map[string]string{\n")
	for _, n := range slices.Sorted(maps.Keys(got)) {
		fmt.Fprintf(&b, "\t%q: %q,\n", n, got[n])
	}
	b.WriteString("},")
	t.Errorf("the import of testdata/fixtures/%s differs from peertest.Case.Imports; if the change is intended, paste:\n%s", c.Peer.Name, b.String())
}

// root is the repository's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// importFixture imports the real fixture of pt into a temporary run
// directory and opens it.
func importFixture(t *testing.T, pt *schema.PeerTool) *schema.RunDir {
	t.Helper()
	var paths []string
	for _, n := range pt.Fixture {
		paths = append(paths, filepath.Join(root(), "testdata", "fixtures", pt.Name, n))
	}
	files, err := importer.ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "run")
	if _, err := importer.Import(context.Background(), pt.Name, files, dest, importer.Options{}); err != nil {
		t.Fatal(err)
	}
	rd, err := schema.OpenRunDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// failedFirstVerifies: an honest import whose first record is a failed
// request without chunks imports, validates, packs and verifies (the
// bundle's records re-encode to the bytes the re-import gives).
func failedFirstVerifies(t *testing.T, c Case) {
	files, set := c.FailedFirst(t)
	tmp := t.TempDir()
	for i := range files {
		p := filepath.Join(tmp, files[i].Name)
		if err := os.WriteFile(p, files[i].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[i].Name = p
	}
	dir := filepath.Join(tmp, "run")
	ctx := context.Background()
	if _, err := importer.Import(ctx, c.Peer.Name, files, dir, importer.Options{Set: set}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, schema.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	first, err := schema.DecodeRecord(b[:bytes.IndexByte(b, '\n')])
	if err != nil {
		t.Fatal(err)
	}
	if first.Status == schema.StatusOK || len(first.ChunksNS) != 0 {
		t.Fatalf("the edited input's first record is %s with %d chunks, want a failed one without chunks", first.Status, len(first.ChunksNS))
	}
	if _, err := schema.CheckRunDir(ctx, dir, 10, nil); err != nil {
		t.Fatalf("validate: %v", err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := importer.CheckRederived(ctx, rd, rd.ReadAttachment); err != nil {
		t.Fatalf("validate (re-derive): %v", err)
	}
	bundle := filepath.Join(tmp, "bundle")
	if _, err := artifact.Pack(ctx, dir, bundle, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}), verify.WithImportChecker(importer.Rederiver{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, bundle, verify.Policy{AllowUnsignedUnsafe: true}); err != nil {
		t.Fatalf("verify: %v", err)
	}
}
