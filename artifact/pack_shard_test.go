package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/schema"
	"github.com/klauspost/compress/zstd"
)

// TestPackShardsRecordsInAnyOrder: each records layer holds its point ×
// repeat's records in file order, whether they come grouped (each shard
// compressed as it streams), interleaved (a shard spilled and resumed) or
// grouped but revisited once; the bundle's blobs are exactly the ones its
// layout references and its content checks out.
func TestPackShardsRecordsInAnyOrder(t *testing.T) {
	orders := map[string]func(lines [][]byte) [][]byte{
		"grouped":     grouped, // as capture writes them: one cell after another
		"round robin": roundRobin,
		"revisited": func(l [][]byte) [][]byte { // a cell's first record last
			g := grouped(l)
			return append(append([][]byte{}, g[1:]...), g[0])
		},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{Points: 3, Repeats: 2, Requests: 40})
			lines := order(readRecordLines(t, filepath.Join(run, schema.RecordsZstdFile)))
			writeRecordLines(t, filepath.Join(run, schema.RecordsZstdFile), lines)
			want := map[string][]byte{}
			for _, l := range lines {
				k := shardOf(t, l)
				want[k] = append(append(want[k], l...), '\n')
			}
			var r progress.Recorder
			out := filepath.Join(tmp, "b")
			res, err := artifact.Pack(progress.With(context.Background(), r.Func()), run, out, artifact.PackOptions{Created: artifacttest.Created})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, l := range res.Layers {
				if l.Kind != artifact.KindRecords {
					continue
				}
				k := fmt.Sprintf("%s/%d", l.Point, l.Repeat)
				keys = append(keys, k)
				got := readBlob(t, out, l.Descriptor.Digest.Encoded())
				if !bytes.Equal(got, want[k]) {
					t.Errorf("layer %s: %d bytes, want its %d bytes of records in file order", k, len(got), len(want[k]))
				}
				if n := int64(bytes.Count(got, []byte("\n"))); n != l.Records || int64(len(got)) != l.UncompressedSize {
					t.Errorf("layer %s: states %d records, %d bytes; holds %d, %d", k, l.Records, l.UncompressedSize, n, len(got))
				}
			}
			if strings.Join(keys, " ") != "c1/0 c1/1 c2/0 c2/1 c3/0 c3/1" {
				t.Errorf("records layers %v", keys)
			}
			checkBlobsReferenced(t, out)
			b, err := artifact.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := b.CheckContent(context.Background()); err != nil {
				t.Fatal(err)
			}
			phases, err := r.Last()
			if err != nil {
				t.Fatal(err)
			}
			compressPhase := len(phases) == 2 && phases[1].Phase == "pack: compress records"
			if compressPhase != (name != "grouped") {
				t.Errorf("phases %+v: a compress phase only when a shard was spilled", phases)
			}
		})
	}
}

// byShard splits lines by shard, the shards in order of first appearance.
func byShard(lines [][]byte) ([]string, map[string][][]byte) {
	var order []string
	by := map[string][][]byte{}
	for _, l := range lines {
		var r struct {
			Point  string `json:"point"`
			Repeat int    `json:"repeat"`
		}
		json.Unmarshal(l, &r)
		k := fmt.Sprintf("%s/%d", r.Point, r.Repeat)
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], l)
	}
	return order, by
}

// grouped puts each shard's lines together, in file order.
func grouped(lines [][]byte) [][]byte {
	order, by := byShard(lines)
	var out [][]byte
	for _, k := range order {
		out = append(out, by[k]...)
	}
	return out
}

// roundRobin deals the lines of each shard out in turn.
func roundRobin(lines [][]byte) [][]byte {
	order, by := byShard(lines)
	var out [][]byte
	for len(out) < len(lines) {
		for _, k := range order {
			if len(by[k]) > 0 {
				out = append(out, by[k][0])
				by[k] = by[k][1:]
			}
		}
	}
	return out
}

func shardOf(t *testing.T, line []byte) string {
	t.Helper()
	var r struct {
		Point  string `json:"point"`
		Repeat int    `json:"repeat"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d", r.Point, r.Repeat)
}

func readRecordLines(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
}

func writeRecordLines(t *testing.T, name string, lines [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := schema.NewZstdWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		zw.Write(l)
		zw.Write([]byte("\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readBlob(t *testing.T, bundle, hex string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(bundle, "blobs", "sha256", hex))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkBlobsReferenced: every blob file of the directory bundle is named
// by index.json or a manifest it names, and nothing else is in blobs/.
func checkBlobsReferenced(t *testing.T, bundle string) {
	t.Helper()
	refs := map[string]bool{}
	var walk func(doc []byte)
	walk = func(doc []byte) {
		var m struct {
			Manifests []struct{ Digest string } `json:"manifests"`
			Config    struct{ Digest string }   `json:"config"`
			Layers    []struct{ Digest string } `json:"layers"`
		}
		json.Unmarshal(doc, &m)
		for _, d := range m.Manifests {
			refs[d.Digest] = true
			b, err := os.ReadFile(filepath.Join(bundle, "blobs", "sha256", strings.TrimPrefix(d.Digest, "sha256:")))
			if err != nil {
				t.Fatal(err)
			}
			walk(b)
		}
		if m.Config.Digest != "" {
			refs[m.Config.Digest] = true
		}
		for _, l := range m.Layers {
			refs[l.Digest] = true
		}
	}
	idx, err := os.ReadFile(filepath.Join(bundle, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	walk(idx)
	ents, err := os.ReadDir(filepath.Join(bundle, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	var stray []string
	for _, e := range ents {
		if !refs["sha256:"+e.Name()] {
			stray = append(stray, e.Name())
		}
	}
	sort.Strings(stray)
	if len(stray) > 0 {
		t.Errorf("blobs no manifest names: %v", stray)
	}
}
