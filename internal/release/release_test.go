package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func files(t *testing.T) (exe, readme string) {
	t.Helper()
	dir := t.TempDir()
	exe, readme = filepath.Join(dir, "benchseal"), filepath.Join(dir, "README.md")
	if err := os.WriteFile(exe, bytes.Repeat([]byte("\x7fELF binary "), 1000), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readme, []byte("# benchseal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return exe, readme
}

// TestArchivesAreDeterministic: two archives of the same entries, given
// in different orders and from files with different modes and times on
// disk, are byte-identical; a different mtime gives different bytes.
func TestArchivesAreDeterministic(t *testing.T) {
	exe, readme := files(t)
	mtime := time.Unix(1764500000, 0)
	a := []Entry{{Name: "d/benchseal", Source: exe, Executable: true}, {Name: "d/README.md", Source: readme}}
	b := []Entry{a[1], a[0]}
	for _, w := range []struct {
		name  string
		write func(io.Writer, []Entry, time.Time) error
	}{{"tar.gz", WriteTarGz}, {"zip", WriteZip}} {
		var x, y, z bytes.Buffer
		if err := w.write(&x, a, mtime); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(exe, time.Now(), time.Now())
		os.Chmod(readme, 0o666)
		if err := w.write(&y, b, mtime); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Bytes(), y.Bytes()) {
			t.Errorf("%s: two packs of the same entries differ", w.name)
		}
		if err := w.write(&z, a, mtime.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(x.Bytes(), z.Bytes()) {
			t.Errorf("%s: the mtime is not in the archive", w.name)
		}
	}
}

// TestTarGzEntries: directory first, then files by name, owners 0:0
// without names, the given mtime and modes; no name or time in the gzip
// header.
func TestTarGzEntries(t *testing.T) {
	exe, readme := files(t)
	mtime := time.Unix(1764500000, 0)
	var buf bytes.Buffer
	if err := WriteTarGz(&buf, []Entry{{Name: "d/benchseal", Source: exe, Executable: true}, {Name: "d/README.md", Source: readme}}, mtime); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: owner %d:%d %q:%q time %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String())
	}
	want := "d/ -rwxr-xr-x,d/README.md -rw-r--r--,d/benchseal -rwxr-xr-x"
	if strings.Join(got, ",") != want {
		t.Errorf("entries %q, want %q", strings.Join(got, ","), want)
	}
}

func TestZipEntries(t *testing.T) {
	exe, readme := files(t)
	mtime := time.Unix(1764500000, 0)
	var buf bytes.Buffer
	if err := WriteZip(&buf, []Entry{{Name: "d/benchseal.exe", Source: exe, Executable: true}, {Name: "d/README.md", Source: readme}}, mtime); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range zr.File {
		if !f.Modified.Equal(mtime) {
			t.Errorf("%s: modified %v", f.Name, f.Modified)
		}
		got = append(got, f.Name)
	}
	if strings.Join(got, ",") != "d/,d/README.md,d/benchseal.exe" {
		t.Errorf("entries %v", got)
	}
}

func TestArchiveRefusesUnsafeOrDuplicateNames(t *testing.T) {
	exe, _ := files(t)
	for _, name := range []string{"", "/abs", "../up", "a/../../b", "a//b"} {
		if err := WriteTarGz(io.Discard, []Entry{{Name: name, Source: exe}}, time.Unix(1, 0)); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	if err := WriteZip(io.Discard, []Entry{{Name: "a", Source: exe}, {Name: "a", Source: exe}}, time.Unix(1, 0)); err == nil {
		t.Error("a duplicate name was accepted")
	}
}

// TestSumsAndProvenance: SHA256SUMS in sha256sum's format, sorted; the
// provenance names every file as a subject, the commit, the command and
// the builder, is the same for the same inputs and refuses a short
// revision.
func TestSumsAndProvenance(t *testing.T) {
	exe, readme := files(t)
	fs, err := HashFiles([]string{readme, exe})
	if err != nil {
		t.Fatal(err)
	}
	sums := string(SHA256SUMS(fs))
	if !strings.HasPrefix(sums, fs[0].SHA256+"  README.md\n") || !strings.HasSuffix(sums, fs[1].SHA256+"  benchseal\n") {
		t.Errorf("SHA256SUMS:\n%s", sums)
	}
	p := Params{Version: "v0.3.0", Revision: strings.Repeat("ab", 20), Command: "make release VERSION=v0.3.0", Targets: []string{"linux/amd64"},
		GoVersion: "go1.26.8", SourceDateEpoch: 1764500000, LDFlags: "-s -w", BuilderID: "https://example.com/builder"}
	a, err := Provenance(fs, p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Provenance(fs, p)
	if !bytes.Equal(a, b) {
		t.Error("two provenances of the same inputs differ")
	}
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string
			Digest map[string]string
		}
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Command string
					Source  struct{ Commit string }
				}
				ResolvedDependencies []struct {
					URI    string
					Digest map[string]string
				}
			}
			RunDetails struct{ Builder struct{ ID string } }
		}
	}
	if err := json.Unmarshal(a, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateSLSAProvenanceV1 || len(st.Subject) != 2 || st.Subject[1].Digest["sha256"] != fs[1].SHA256 {
		t.Errorf("statement %+v", st)
	}
	bd := st.Predicate.BuildDefinition
	if bd.ExternalParameters.Command != p.Command || bd.ExternalParameters.Source.Commit != p.Revision ||
		bd.ResolvedDependencies[0].Digest["gitCommit"] != p.Revision || st.Predicate.RunDetails.Builder.ID != p.BuilderID {
		t.Errorf("predicate %+v", st.Predicate)
	}
	p.Revision = "abc123"
	if _, err := Provenance(fs, p); err == nil {
		t.Error("a short revision was accepted")
	}
}
