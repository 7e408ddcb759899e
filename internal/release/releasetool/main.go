// Command releasetool is the Go half of scripts/release.sh (make
// release): it packs deterministic archives, writes SHA256SUMS and the
// SLSA provenance statement, and signs the statement with benchseal's
// own signing code (artifact.SignStatement). It is not part of the
// benchseal CLI.
//
//	releasetool archive -out FILE -mtime UNIX NAME=PATH[+x] ...
//	releasetool sums -out SHA256SUMS FILE ...
//	releasetool provenance -out FILE -version V -revision SHA [-ref REF] -command CMD
//	    -targets os/arch,... -go GOVERSION -epoch UNIX -ldflags FLAGS -builder ID FILE ...
//	releasetool sign -key KEY -in STATEMENT -out BUNDLE   (password: BENCHSEAL_PASSWORD)
//	releasetool modproxy -dir DIR -version V -revision REV -time RFC3339
//	    (a file-based GOPROXY holding this module at V, made from REV: make install-check)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/release"
	"github.com/benchseal/benchseal/schema"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: releasetool archive|sums|provenance|sign|modproxy ...")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "archive":
		err = archive(args)
	case "sums":
		err = sums(args)
	case "provenance":
		err = provenance(args)
	case "sign":
		err = signStatement(args)
	case "modproxy":
		err = modProxy(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "releasetool:", err)
		os.Exit(1)
	}
}

// writeFile writes b to path through a temporary file and a rename.
func writeFile(path string, b []byte) error {
	return schema.WriteFileAtomic(path, b, 0o644)
}

func archive(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	out := fs.String("out", "", "archive to write (.tar.gz or .zip)")
	mtime := fs.Int64("mtime", 0, "modification time of every entry (Unix seconds)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *mtime <= 0 || fs.NArg() == 0 {
		return fmt.Errorf("archive: -out, -mtime and at least one NAME=PATH are required")
	}
	var entries []release.Entry
	for _, a := range fs.Args() {
		name, src, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("archive: %q: want NAME=PATH[+x]", a)
		}
		src, x := strings.CutSuffix(src, "+x")
		entries = append(entries, release.Entry{Name: name, Source: src, Executable: x})
	}
	tmp := *out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	t := time.Unix(*mtime, 0)
	switch {
	case strings.HasSuffix(*out, ".tar.gz"):
		err = release.WriteTarGz(f, entries, t)
	case strings.HasSuffix(*out, ".zip"):
		err = release.WriteZip(f, entries, t)
	default:
		err = fmt.Errorf("archive: %s: want .tar.gz or .zip", *out)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, *out)
}

func sums(args []string) error {
	fs := flag.NewFlagSet("sums", flag.ContinueOnError)
	out := fs.String("out", "", "SHA256SUMS file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := release.HashFiles(fs.Args())
	if err != nil {
		return err
	}
	return writeFile(*out, release.SHA256SUMS(files))
}

func provenance(args []string) error {
	fs := flag.NewFlagSet("provenance", flag.ContinueOnError)
	var p release.Params
	out := fs.String("out", "", "statement to write")
	targets := fs.String("targets", "", "comma-separated GOOS/GOARCH")
	fs.StringVar(&p.Version, "version", "", "release version")
	fs.StringVar(&p.Revision, "revision", "", "git commit")
	fs.StringVar(&p.Ref, "ref", "", "git ref (optional)")
	fs.StringVar(&p.Command, "command", "", "build command")
	fs.StringVar(&p.GoVersion, "go", "", "Go version")
	fs.Int64Var(&p.SourceDateEpoch, "epoch", 0, "SOURCE_DATE_EPOCH")
	fs.StringVar(&p.LDFlags, "ldflags", "", "-ldflags of the build")
	fs.StringVar(&p.BuilderID, "builder", "", "builder id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p.Targets = strings.Split(*targets, ",")
	files, err := release.HashFiles(fs.Args())
	if err != nil {
		return err
	}
	b, err := release.Provenance(files, p)
	if err != nil {
		return err
	}
	return writeFile(*out, b)
}

func signStatement(args []string) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	key := fs.String("key", "", "private key (benchseal keygen or cosign generate-key-pair)")
	in := fs.String("in", "", "in-toto statement to sign")
	out := fs.String("out", "", "Sigstore bundle to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pem, err := os.ReadFile(*key)
	if err != nil {
		return err
	}
	s, err := artifact.LoadPrivateKey(pem, []byte(os.Getenv("BENCHSEAL_PASSWORD")))
	if err != nil {
		return fmt.Errorf("sign: %s: %w", *key, err)
	}
	stmt, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	b, err := artifact.SignStatement(context.Background(), stmt, s)
	if err != nil {
		return err
	}
	return writeFile(*out, b)
}

// modProxy writes the module proxy layout (go help goproxy) of this
// module at one version into a directory, for GOPROXY=file://DIR: @v/list,
// V.info, V.mod and V.zip, the zip made from the committed revision by
// golang.org/x/mod/zip (git archive: only committed files), as the
// public proxy would make it from a tag.
func modProxy(args []string) error {
	fs := flag.NewFlagSet("modproxy", flag.ContinueOnError)
	dir := fs.String("dir", "", "proxy directory to write")
	version := fs.String("version", "", "module version (vX.Y.Z)")
	revision := fs.String("revision", "", "git revision of the repository in the working directory")
	when := fs.String("time", "", "the version's time (RFC 3339), for V.info")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *version == "" || *revision == "" || *when == "" {
		return fmt.Errorf("modproxy: -dir, -version, -revision and -time are required")
	}
	t, err := time.Parse(time.RFC3339, *when)
	if err != nil {
		return fmt.Errorf("modproxy: -time: %w", err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return fmt.Errorf("modproxy: %w", err)
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("modproxy: go.mod names no module")
	}
	mv := module.Version{Path: path, Version: *version}
	if err := module.Check(mv.Path, mv.Version); err != nil {
		return fmt.Errorf("modproxy: %w", err)
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		return fmt.Errorf("modproxy: %w", err)
	}
	v := filepath.Join(*dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		return err
	}
	var zb bytes.Buffer
	if err := modzip.CreateFromVCS(&zb, mv, ".", *revision, ""); err != nil {
		return fmt.Errorf("modproxy: module zip of %s: %w", *revision, err)
	}
	info, err := json.Marshal(struct{ Version, Time string }{*version, t.UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"list": []byte(*version + "\n"), *version + ".info": info, *version + ".mod": gomod, *version + ".zip": zb.Bytes()} {
		if err := writeFile(filepath.Join(v, name), b); err != nil {
			return err
		}
	}
	return nil
}
