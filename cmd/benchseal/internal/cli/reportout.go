package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/benchseal/benchseal/schema"
)

// reportOut is the --out flag of a command that prints a report (replay,
// compare, decide, verify, validate). A shell redirect empties an existing
// file before the command runs, so a failing command loses the report the
// user had; --out writes beside FILE and renames only when the report is
// complete, so FILE holds either the old report or the whole new one. A
// verdict (verify's REJECTED, validate's invalid, the comparability
// guard's refusal) is a whole report and is written though the command
// exits 3; an error that leaves no report (compare or decide stopping at
// a rejected input) leaves FILE as it was.
type reportOut struct {
	path string
}

// bind adds --out to fs; whole says which of the command's outcomes are a
// whole report (written whatever the exit code), stops which leave FILE
// as it was, so that each command's help says what it does.
func (r *reportOut) bind(fs *pflag.FlagSet, whole, stops string) {
	fs.StringVar(&r.path, "out", "", "write the report to FILE instead of standard output, atomically: an existing FILE is replaced only by a complete report ("+whole+"); "+stops+" leaves FILE as it was")
}

// reportFile is an open --out report: Commit puts it in place, Discard
// removes it; after either, the other does nothing. st is nil when FILE
// is a device or pipe, written through.
type reportFile struct {
	w    io.Writer
	f    *os.File // nil without --out
	st   *schema.Staging
	path string
	done bool
}

// open returns where the report goes: standard output without --out; with
// it, a staging file beside FILE, created before any work so that a
// directory, an unwritable place or one of the command's inputs is
// refused at once.
func (r *reportOut) open(cio *IO, inputs ...string) (*reportFile, error) {
	if r.path == "" {
		return &reportFile{w: cio.Out, done: true}, nil
	}
	if fi, err := os.Stat(r.path); err == nil && fi.IsDir() {
		return nil, usagef("--out %s is a directory: name the report file", r.path)
	}
	if err := refuseInputAsOut("--out", r.path, inputs); err != nil {
		return nil, err
	}
	if schema.NotRegular(r.path) {
		// A device or pipe is written to, never renamed over.
		f, err := os.OpenFile(r.path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", r.path, err)
		}
		return &reportFile{w: &textOut{w: f}, f: f, path: r.path}, nil
	}
	schema.ReclaimStale(r.path) // best effort: a killed run's staging never blocks
	f, st, err := schema.NewStagingFile(r.path, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", r.path, err)
	}
	return &reportFile{w: &textOut{w: f}, f: f, st: st, path: r.path}, nil
}

// Commit syncs the staging file and renames it over FILE.
func (o *reportFile) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	err := o.w.(*textOut).Flush()
	if o.st == nil { // written through (open)
		if err = errors.Join(err, o.f.Close()); err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
		return nil
	}
	defer o.st.Release()
	tmp := o.f.Name()
	err = errors.Join(err, o.f.Sync(), o.f.Close())
	if err == nil {
		err = os.Rename(tmp, o.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	schema.SyncDir(filepath.Dir(o.path))
	return nil
}

// Discard removes the staging file, leaving FILE as it was.
func (o *reportFile) Discard() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.st == nil {
		return
	}
	os.Remove(o.f.Name())
	o.st.Release()
}

// refuseInputAsOut refuses an output path (the flag's value) that is one
// of the command's inputs (the same file or directory, through any link or
// spelling) or inside an input directory (a run directory's or bundle
// directory's files): the output would replace what the command read, or
// add a file to it. It is a usage error whatever --force says, checked
// before any work. Empty inputs (flags not given) are skipped.
func refuseInputAsOut(flag, out string, inputs []string) error {
	ofi, oerr := os.Stat(out)
	dir, derr := filepath.EvalSymlinks(filepath.Dir(out))
	target := filepath.Join(dir, filepath.Base(out))
	for _, in := range inputs {
		if in == "" {
			continue
		}
		ifi, err := os.Stat(in)
		if err != nil {
			continue // not a local path (a reference), or unreadable: the command says so
		}
		if oerr == nil && os.SameFile(ofi, ifi) {
			return usagef("%s %s is the command's input %s: name another file", flag, out, in)
		}
		if !ifi.IsDir() {
			continue
		}
		root, err := filepath.EvalSymlinks(in)
		if err != nil || derr != nil {
			continue
		}
		if rel, err := filepath.Rel(root, target); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return usagef("%s %s is inside the command's input directory %s: name a file outside it", flag, out, in)
		}
	}
	return nil
}
