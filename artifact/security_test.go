package artifact_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

type entry struct {
	hdr  tar.Header
	data []byte
}

func readTarEntries(t *testing.T, p string) []entry {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(b))
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		d, _ := io.ReadAll(tr)
		out = append(out, entry{*h, d})
	}
}

func writeTarEntries(t *testing.T, p string, es []entry) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := e.hdr
		h.Size = int64(len(e.data))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write(e.data)
		}
	}
	tw.Close()
	os.WriteFile(p, buf.Bytes(), 0o644)
}

func wantInvalid(t *testing.T, err error, check string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want rejection by %s", check)
	}
	var ae *artifact.Error
	if !errors.Is(err, artifact.ErrInvalid) || !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *artifact.Error", err)
	}
	if ae.Check != check {
		t.Fatalf("check %q (%v), want %q", ae.Check, err, check)
	}
}

func TestOpenRejectsUnsafeTars(t *testing.T) {
	base := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	orig := readTarEntries(t, base)
	reg := func(name string, data []byte) entry {
		return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}, data}
	}
	blob := "blobs/sha256/" + strings.Repeat("ab", 32)
	cases := []struct {
		name string
		mod  func([]entry) []entry
	}{
		{"traversal", func(es []entry) []entry { return append(es, reg("../evil", []byte("x"))) }},
		{"absolute", func(es []entry) []entry { return append(es, reg("/etc/evil", []byte("x"))) }},
		{"dotdot inside", func(es []entry) []entry { return append(es, reg("blobs/../../evil", []byte("x"))) }},
		{"symlink", func(es []entry) []entry {
			return append(es, entry{tar.Header{Typeflag: tar.TypeSymlink, Name: blob, Linkname: "/etc/passwd"}, nil})
		}},
		{"hardlink", func(es []entry) []entry {
			return append(es, entry{tar.Header{Typeflag: tar.TypeLink, Name: blob, Linkname: "index.json"}, nil})
		}},
		{"device", func(es []entry) []entry {
			return append(es, entry{tar.Header{Typeflag: tar.TypeChar, Name: blob, Devmajor: 1, Devminor: 3}, nil})
		}},
		{"fifo", func(es []entry) []entry {
			return append(es, entry{tar.Header{Typeflag: tar.TypeFifo, Name: blob}, nil})
		}},
		{"duplicate entry", func(es []entry) []entry { return append(es, es[len(es)-1]) }},
		{"duplicate via ./", func(es []entry) []entry {
			e := es[len(es)-1]
			e.hdr.Name = "./" + e.hdr.Name
			return append(es, e)
		}},
		{"unknown file", func(es []entry) []entry { return append(es, reg("README", []byte("x"))) }},
		{"bad blob name", func(es []entry) []entry { return append(es, reg("blobs/sha256/XYZ", []byte("x"))) }},
		{"sha512 blob dir", func(es []entry) []entry {
			return append(es, reg("blobs/sha512/"+strings.Repeat("ab", 64), []byte("x")))
		}},
		{"unreferenced blob", func(es []entry) []entry {
			d := artifact.DigestBytes([]byte("smuggled"))
			return append(es, reg("blobs/sha256/"+d.Encoded(), []byte("smuggled")))
		}},
		{"missing index", func(es []entry) []entry {
			var out []entry
			for _, e := range es {
				if e.hdr.Name != "index.json" {
					out = append(out, e)
				}
			}
			return out
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := c.mod(append([]entry(nil), orig...))
			p := filepath.Join(t.TempDir(), "x.tar")
			writeTarEntries(t, p, es)
			b, err := artifact.Open(p)
			if err == nil {
				b.Close()
				t.Fatal("accepted")
			}
			if !errors.Is(err, artifact.ErrInvalid) {
				t.Fatalf("not ErrInvalid: %v", err)
			}
		})
	}
}

func TestOpenRejectsSymlinkInDirectory(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	idx := filepath.Join(p, "index.json")
	data, _ := os.ReadFile(idx)
	os.WriteFile(filepath.Join(filepath.Dir(p), "real-index.json"), data, 0o644)
	os.Remove(idx)
	if err := os.Symlink("../real-index.json", idx); err != nil {
		t.Skip(err)
	}
	_, err := artifact.Open(p)
	wantInvalid(t, err, artifact.CheckContainer)
}

func editLayout(t *testing.T, p string, editIndex func(map[string]any), editManifest func(map[string]any)) {
	artifacttest.EditLayout(t, p, editIndex, editManifest)
}

func firstEntry(idx map[string]any) map[string]any {
	return idx["manifests"].([]any)[0].(map[string]any)
}
func layer(m map[string]any, i int) map[string]any { return m["layers"].([]any)[i].(map[string]any) }

func TestOpenRejectsBadDescriptorsAndDocuments(t *testing.T) {
	cases := []struct {
		name  string
		check string
		index func(map[string]any)
		man   func(map[string]any)
		raw   func([]byte) []byte // edits index.json bytes
	}{
		{name: "sha512 digest", check: artifact.CheckLayout, index: func(i map[string]any) {
			firstEntry(i)["digest"] = "sha512:" + strings.Repeat("ab", 64)
		}},
		{name: "uppercase hex", check: artifact.CheckLayout, index: func(i map[string]any) {
			e := firstEntry(i)
			e["digest"] = strings.ToUpper(e["digest"].(string)[:10]) + e["digest"].(string)[10:]
		}},
		{name: "short hex", check: artifact.CheckLayout, index: func(i map[string]any) { firstEntry(i)["digest"] = "sha256:abc" }},
		{name: "size mismatch", check: artifact.CheckDescriptors, index: func(i map[string]any) {
			e := firstEntry(i)
			e["size"] = e["size"].(float64) + 1
		}},
		{name: "no mediaType", check: artifact.CheckLayout, index: func(i map[string]any) { delete(i, "mediaType") }},
		{name: "index also has layers", check: artifact.CheckLayout, index: func(i map[string]any) { i["layers"] = []any{} }},
		{name: "unknown artifactType", check: artifact.CheckLayout, index: func(i map[string]any) {
			firstEntry(i)["artifactType"] = "application/x-other"
		}},
		{name: "duplicate key", check: artifact.CheckLayout, raw: func(b []byte) []byte {
			return bytes.Replace(b, []byte(`{"schemaVersion":2,`), []byte(`{"schemaVersion":2,"schemaVersion":2,`), 1)
		}},
		{name: "case-folded key", check: artifact.CheckLayout, raw: func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"mediaType":"application/vnd.oci.image.index.v1+json"`), []byte(`"MEDIATYPE":"application/vnd.oci.image.index.v1+json"`), 1)
		}},
		{name: "unknown layer media type", check: artifact.CheckManifest, man: func(m map[string]any) {
			layer(m, 1)["mediaType"] = "application/vnd.benchseal.run.future.v9"
		}},
		{name: "foreign layer digest algorithm", check: artifact.CheckManifest, man: func(m map[string]any) {
			layer(m, 1)["digest"] = "md5:" + strings.Repeat("a", 32)
		}},
		{name: "layer size mismatch", check: artifact.CheckDescriptors, man: func(m map[string]any) {
			l := layer(m, 1)
			l["size"] = l["size"].(float64) + 1
		}},
		{name: "wrong artifactType", check: artifact.CheckManifest, man: func(m map[string]any) { m["artifactType"] = "application/x-other" }},
		{name: "non-empty config", check: artifact.CheckManifest, man: func(m map[string]any) {
			m["config"].(map[string]any)["mediaType"] = "application/vnd.oci.image.config.v1+json"
		}},
		{name: "manifest with manifests", check: artifact.CheckManifest, man: func(m map[string]any) { m["manifests"] = []any{} }},
		{name: "layer urls", check: artifact.CheckManifest, man: func(m map[string]any) { layer(m, 1)["urls"] = []any{"http://x"} }},
		{name: "traversal title", check: artifact.CheckManifest, man: func(m map[string]any) {
			last := layer(m, len(m["layers"].([]any))-1)
			last["annotations"].(map[string]any)["org.opencontainers.image.title"] = "attachments/../../etc/passwd"
		}},
		{name: "declared bomb ratio", check: artifact.CheckManifest, man: func(m map[string]any) {
			layer(m, 3)["annotations"].(map[string]any)["dev.benchseal.uncompressed.size"] = "999999999999"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
			if c.index != nil || c.man != nil {
				editLayout(t, p, c.index, c.man)
			}
			if c.raw != nil {
				ip := filepath.Join(p, "index.json")
				b, _ := os.ReadFile(ip)
				nb := c.raw(b)
				if bytes.Equal(nb, b) {
					t.Fatal("raw edit did not apply")
				}
				os.WriteFile(ip, nb, 0o644)
			}
			b, err := artifact.Open(p)
			if err == nil {
				b.Close()
			}
			wantInvalid(t, err, c.check)
		})
	}
}

func replaceLayer(t *testing.T, p string, i int, data []byte, ann map[string]string) {
	artifacttest.ReplaceLayer(t, p, i, data, ann)
}

func TestDecompressionBombsAreStopped(t *testing.T) {
	zeros := make([]byte, 32<<20)
	t.Run("output over the declared size", func(t *testing.T) {
		p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
		var buf bytes.Buffer
		zw, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		zw.Write(zeros)
		zw.Close()
		replaceLayer(t, p, 3, buf.Bytes(), map[string]string{"dev.benchseal.uncompressed.size": "1000"})
		b, err := artifact.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		wantInvalid(t, b.CheckContent(context.Background()), artifact.CheckUncompressed)
	})
	t.Run("window over the cap", func(t *testing.T) {
		p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
		var buf bytes.Buffer
		zw, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(64<<20), zstd.WithSingleSegment(false))
		zw.Write(zeros)
		zw.Close()
		replaceLayer(t, p, 3, buf.Bytes(), map[string]string{"dev.benchseal.uncompressed.size": "33554432"})
		b, err := artifact.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		wantInvalid(t, b.CheckContent(context.Background()), artifact.CheckUncompressed)
	})
}

// TestOpenRejectsLenientTars: a bundle tar ends with exactly the
// end-of-archive marker (plus, at most, zero padding as tar programs
// write); a second archive appended or a missing marker is refused.
func TestOpenRejectsLenientTars(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer
	tw := tar.NewWriter(&other)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "extra.txt", Size: 2, Mode: 0o644})
	tw.Write([]byte("hi"))
	tw.Close()
	pad := (10240 - len(good)%10240) % 10240
	for name, c := range map[string]struct {
		data []byte
		ok   bool
	}{
		"as packed":                  {good, true},
		"GNU tar record padding":     {append(bytes.Clone(good), make([]byte, pad)...), true},
		"second archive appended":    {append(bytes.Clone(good), other.Bytes()...), false},
		"garbage after the marker":   {append(bytes.Clone(good), []byte("GARBAGE!")...), false},
		"no end marker":              {good[:len(good)-1024], false},
		"half an end marker":         {good[:len(good)-512], false},
		"nonzero byte in the marker": {append(bytes.Clone(good[:len(good)-1]), 1), false},
		"too much zero padding":      {append(bytes.Clone(good), make([]byte, 1<<20)...), false},
	} {
		t.Run(name, func(t *testing.T) {
			q := filepath.Join(t.TempDir(), "x.tar")
			os.WriteFile(q, c.data, 0o644)
			b, err := artifact.Open(q)
			if err == nil {
				b.Close()
			}
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantInvalid(t, err, artifact.CheckContainer)
		})
	}
}

// A tar cut inside an entry says so, not "bad size".
func TestOpenNamesATruncatedTar(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(t.TempDir(), "cut.tar")
	os.WriteFile(q, good[:len(good)/2], 0o644)
	b, err := artifact.Open(q)
	if err == nil {
		b.Close()
		t.Fatal("opened a truncated tar")
	}
	wantInvalid(t, err, artifact.CheckContainer)
	if !strings.Contains(err.Error(), "truncated") {
		t.Errorf("error %q does not say the archive is truncated", err)
	}
}

// tarBlock is one raw 512-byte tar header: name, type flag, size and
// magic+version ("ustar\x0000" for USTAR, "ustar  \x00" for GNU, "" for v7),
// with a correct checksum.
func tarBlock(name string, flag byte, size int, magic string) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], []byte(fmt.Sprintf("%011o\x00", size)))
	copy(b[136:148], "15000000000\x00")
	b[156] = flag
	copy(b[257:265], magic)
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], []byte(fmt.Sprintf("%06o\x00 ", sum)))
	return b
}

// tarData is data padded to a 512-byte block with pad.
func tarData(data []byte, pad byte) []byte {
	out := bytes.Clone(data)
	for len(out)%512 != 0 {
		out = append(out, pad)
	}
	return out
}

// paxRecord is one "len key=value\n" record of a PAX extended header.
func paxRecord(k, v string) []byte {
	r := " " + k + "=" + v + "\n"
	n := len(r) + 1
	for n != len(fmt.Sprint(n))+len(r) {
		n = len(fmt.Sprint(n)) + len(r)
	}
	return []byte(fmt.Sprint(n) + r)
}

// TestOpenRefusesNonUSTARTarEntries: a bundle tar is plain USTAR with one
// name per entry, the layout name itself. An entry whose PAX path and GNU
// long name differ is read as two different files by Go's archive/tar and
// GNU tar (one tar, two verified runs), so every PAX
// and GNU header, every non-plain name and any non-zero padding is refused.
func TestOpenRefusesNonUSTARTarEntries(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	orig := readTarEntries(t, p)
	const ustar, gnu = "ustar\x0000", "ustar  \x00"
	// build writes orig with the entry named index.json replaced by
	// what entry returns (the header blocks and padded data of one file).
	build := func(entry func(data []byte) []byte, extra ...[]byte) []byte {
		var out []byte
		for _, e := range orig {
			if e.hdr.Name == "index.json" {
				out = append(out, entry(e.data)...)
				continue
			}
			out = append(out, tarBlock(e.hdr.Name, '0', len(e.data), ustar)...)
			out = append(out, tarData(e.data, 0)...)
		}
		for _, x := range extra {
			out = append(out, x...)
		}
		return append(out, make([]byte, 1024)...)
	}
	plain := func(name string, flag byte, magic string) func([]byte) []byte {
		return func(d []byte) []byte { return append(tarBlock(name, flag, len(d), magic), tarData(d, 0)...) }
	}
	pax := func(typ byte, recs ...[]byte) []byte {
		body := bytes.Join(recs, nil)
		return append(tarBlock("PaxHeaders/index.json", typ, len(body), ustar), tarData(body, 0)...)
	}
	gnuLong := func(name string) []byte {
		return append(tarBlock("././@LongLink", 'L', len(name)+1, gnu), tarData([]byte(name+"\x00"), 0)...)
	}
	cases := []struct {
		name string
		tar  []byte
		ok   bool
	}{
		{"as benchseal writes it", build(plain("index.json", '0', ustar)), true},
		{"tar's blobs/ and blobs/sha256/ directories", build(plain("index.json", '0', ustar),
			tarBlock("blobs/", '5', 0, ustar), tarBlock("blobs/sha256/", '5', 0, ustar)), true},
		{"PAX path and GNU long name differ", build(func(d []byte) []byte {
			h := pax('x', paxRecord("path", "oci-layout.other"))
			h = append(h, gnuLong("index.json")...)
			return append(h, append(tarBlock("x", '0', len(d), gnu), tarData(d, 0)...)...)
		}), false},
		{"PAX header naming the same file", build(func(d []byte) []byte {
			return append(pax('x', paxRecord("path", "index.json")), plain("index.json", '0', ustar)(d)...)
		}), false},
		{"PAX header with other records only", build(func(d []byte) []byte {
			return append(pax('x', paxRecord("mtime", "1500000000")), plain("index.json", '0', ustar)(d)...)
		}), false},
		{"PAX global header", build(plain("index.json", '0', ustar), pax('g', paxRecord("comment", "x"))), false},
		{"GNU long name", build(func(d []byte) []byte {
			return append(gnuLong("index.json"), plain("index.json", '0', gnu)(d)...)
		}), false},
		{"GNU header", build(plain("index.json", '0', gnu)), false},
		{"v7 header", build(plain("index.json", '0', "")), false},
		{"regular file with a trailing slash", build(plain("index.json/", '0', ustar)), false},
		{"leading ./", build(plain("./index.json", '0', ustar)), false},
		{"old regular-file type flag NUL", build(plain("index.json", 0, ustar)), false},
		{"directory ./", build(plain("index.json", '0', ustar), tarBlock("./", '5', 0, ustar)), false},
		{"non-zero padding", build(func(d []byte) []byte {
			return append(tarBlock("index.json", '0', len(d), ustar), tarData(d, 'x')...)
		}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := filepath.Join(t.TempDir(), "x.tar")
			if err := os.WriteFile(q, c.tar, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := artifact.Open(q)
			if err == nil {
				b.Close()
			}
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantInvalid(t, err, artifact.CheckContainer)
			t.Log(err)
		})
	}
}

// Attachment titles that cannot be unpacked side by
// side ("a" and "a/b"; "A" and "a") are refused.
func TestOpenRefusesCollidingAttachmentTitles(t *testing.T) {
	for name, title := range map[string]string{
		"file and folder": "attachments/notes",
		"letter case":     "attachments/NOTES/readme.txt",
	} {
		t.Run(name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
			artifacttest.EditLayout(t, p, nil, func(m map[string]any) {
				ls := m["layers"].([]any)
				last := ls[len(ls)-1].(map[string]any)
				cp := map[string]any{}
				for k, v := range last {
					cp[k] = v
				}
				cp["annotations"] = map[string]any{artifact.AnnotationTitle: title}
				m["layers"] = append(ls, cp)
			})
			b, err := artifact.Open(p)
			if err == nil {
				b.Close()
			}
			wantInvalid(t, err, artifact.CheckManifest)
			if !strings.Contains(err.Error(), "letter case") && !strings.Contains(err.Error(), "also the folder") {
				t.Errorf("refused for another reason: %v", err)
			}
		})
	}
}
