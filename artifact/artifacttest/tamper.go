package artifacttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// EditLayout rewrites index.json and, through editManifest, the run
// manifest (re-hashed, its index entry updated) of a directory bundle, as
// a hostile publisher would. Either function may be nil.
func EditLayout(t testing.TB, p string, editIndex func(map[string]any), editManifest func(map[string]any)) {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	rd := b.RunDescriptor()
	b.Close()
	var idx map[string]any
	ib, err := os.ReadFile(filepath.Join(p, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ib, &idx); err != nil {
		t.Fatal(err)
	}
	if editManifest != nil {
		mp := filepath.Join(p, "blobs", "sha256", rd.Digest.Encoded())
		mb, err := os.ReadFile(mp)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Fatal(err)
		}
		editManifest(m)
		nb, _ := json.Marshal(m)
		os.Remove(mp)
		d := artifact.DigestBytes(nb)
		mustWrite(t, filepath.Join(p, "blobs", "sha256", d.Encoded()), nb)
		e := idx["manifests"].([]any)[0].(map[string]any)
		e["digest"], e["size"] = string(d), len(nb)
	}
	if editIndex != nil {
		editIndex(idx)
	}
	nb, _ := json.Marshal(idx)
	mustWrite(t, filepath.Join(p, "index.json"), nb)
}

func mustWrite(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReplaceLayer swaps the blob of layer i of an unsigned directory bundle
// for data, with the annotation values given, re-hashing the manifest.
func ReplaceLayer(t testing.TB, p string, i int, data []byte, ann map[string]string) {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	old := b.Layers()[i].Descriptor.Digest
	b.Close()
	d := artifact.DigestBytes(data)
	EditLayout(t, p, nil, func(m map[string]any) {
		l := m["layers"].([]any)[i].(map[string]any)
		l["digest"], l["size"] = string(d), len(data)
		for k, v := range ann {
			l["annotations"].(map[string]any)[k] = v
		}
	})
	os.Remove(filepath.Join(p, "blobs", "sha256", old.Encoded()))
	mustWrite(t, filepath.Join(p, "blobs", "sha256", d.Encoded()), data)
}

// SignStatementOf signs the statement of the bundle at p with the
// publisher key without checking its content (as a hostile publisher
// would) and returns the Sigstore bundle JSON, for Policy.Detached.
func SignStatementOf(t testing.TB, p string) []byte {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	raw, err := artifact.MarshalStatement(b.Statement())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := artifact.SignStatement(context.Background(), raw, Publisher(t))
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// EditRunManifest rewrites the manifest.json of the run directory run
// through edit, as a hostile publisher would: nothing is validated.
func EditRunManifest(t testing.TB, run string, edit func(m map[string]any)) {
	t.Helper()
	EditJSON(t, filepath.Join(run, schema.ManifestFile), edit)
}

// EditJSON rewrites the JSON object in the file at p through edit,
// without validating anything.
func EditJSON(t testing.TB, p string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, b)
}

// ReplaceRecords swaps records layer i of the bundle at p for recs, with
// the annotations a hostile publisher would set to match (digests, size,
// count), as artifact.Pack never writes them for an invalid run.
func ReplaceRecords(t *testing.T, p string, i int, recs []*schema.Record) {
	t.Helper()
	var plain, packed bytes.Buffer
	pw, _ := schema.NewRecordWriter(&plain, false)
	zw, _ := schema.NewRecordWriter(&packed, true)
	for _, r := range recs {
		pw.Write(r)
		zw.Write(r)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	ReplaceLayer(t, p, i, packed.Bytes(), map[string]string{
		artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(plain.Bytes())),
		artifact.AnnotationUncompressedSize:   strconv.Itoa(plain.Len()),
		artifact.AnnotationRecords:            strconv.FormatInt(pw.Count(), 10),
	})
}

// FirstRecordsLayer returns the index and title of the first records
// layer of the bundle at p and the records it holds, for a test that
// edits them (ReplaceRecords).
func FirstRecordsLayer(t testing.TB, p string) (int, string, []*schema.Record) {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	i := slices.IndexFunc(b.Layers(), func(l artifact.Layer) bool { return l.Kind == artifact.KindRecords })
	if i < 0 {
		t.Fatalf("%s has no records layer", p)
	}
	title := b.Layers()[i].Title
	rs, err := b.OpenRecordStream()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var recs []*schema.Record
	for {
		rec, err := rs.Next()
		if err == io.EOF {
			return i, title, recs
		}
		if err != nil {
			t.Fatal(err)
		}
		if rs.Name() == title {
			recs = append(recs, rec)
		}
	}
}
