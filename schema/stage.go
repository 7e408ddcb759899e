package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/errcond"
)

// stagingInfix names every temporary entry benchseal creates beside an
// output: ".<base>.benchseal-<pid>-<random>". The name says whose it is
// (this program, for that output) and which process made it; the entry is
// also locked (flock) while that process runs, so a later run can tell a
// leftover of a killed run from one still in use.
const stagingInfix = ".benchseal-"

// Staging is a temporary file or directory beside an output path, locked
// while its owner runs. Release it once it has been renamed into place or
// removed.
type Staging struct {
	// Path is the staging entry.
	Path string
	lock *os.File
}

func stagingPrefix(out string) string { return "." + filepath.Base(filepath.Clean(out)) + stagingInfix }

// NewStagingDir creates a locked, empty staging directory (mode 0755)
// beside out, in out's parent directory (created if missing), so that it
// can be renamed onto out.
func NewStagingDir(out string) (*Staging, error) {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, stagingPrefix(out)+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.Remove(dir)
		return nil, err
	}
	f, err := os.Open(dir)
	if err == nil {
		err = lockNB(f)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.Remove(dir)
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &Staging{Path: dir, lock: f}, nil
}

// NewStagingFile creates a locked staging file beside out with mode perm
// and returns it open for writing; the Staging's lock is the file itself.
func NewStagingFile(out string, perm fs.FileMode) (*os.File, *Staging, error) {
	f, err := os.CreateTemp(filepath.Dir(filepath.Clean(out)), stagingPrefix(out)+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		// Name the file asked for, not the temporary one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, nil, err
	}
	// A chmod or lock failure must not hand back an unlocked staging file,
	// which another run's reclaim could delete while it is being written.
	err = f.Chmod(perm)
	if err == nil {
		err = lockNB(f)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	return f, &Staging{Path: f.Name()}, nil
}

// Release drops the lock of a staging directory. It does not remove it.
func (s *Staging) Release() {
	if s != nil && s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// Reclaimed is a leftover staging entry of a killed run that ReclaimStale
// removed.
type Reclaimed struct {
	Path  string
	Bytes int64
}

// String describes the reclaimed entry for a message.
func (r Reclaimed) String() string {
	return fmt.Sprintf("%s (%d bytes, left by a killed run)", r.Path, r.Bytes)
}

// ReclaimStale removes the staging entries of out (see NewStagingDir)
// whose process is gone and whose lock is free: what a killed pack, sign
// or write left behind. Entries of running processes are left alone. It
// returns what it removed.
func ReclaimStale(out string) ([]Reclaimed, error) {
	parent := filepath.Dir(filepath.Clean(out))
	prefix := stagingPrefix(out)
	ents, err := os.ReadDir(parent)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reclaim staging of %s: %w", out, err)
	}
	var out2 []Reclaimed
	var errs []error
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidStr, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if lockNB(f) != nil { // still in use after all
			f.Close()
			continue
		}
		n := diskUsage(p)
		err = os.RemoveAll(p)
		f.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out2 = append(out2, Reclaimed{Path: p, Bytes: n})
	}
	if len(errs) > 0 {
		return out2, fmt.Errorf("reclaim staging of %s: %w", out, errors.Join(errs...))
	}
	return out2, nil
}

func diskUsage(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// SyncDir flushes a directory's entries (after renames into it) to disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ErrBusy is returned by LockPath when another process holds the lock.
var ErrBusy = errors.New("in use by another benchseal process")

// LockPath takes an exclusive lock on the file or directory at p (flock,
// released by the returned function or when the process dies), so two
// processes never rewrite the same output at once. When p is replaced
// (renamed over) while the lock is being taken, the new p is locked.
func LockPath(p string) (unlock func(), err error) {
	for range 10 {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		if err := lockNB(f); err != nil {
			f.Close()
			return nil, errcond.Errorf(ErrBusy, "%s: in use by another benchseal process", p)
		}
		a, err1 := f.Stat()
		b, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return func() { f.Close() }, nil
		}
		f.Close()
	}
	return nil, errcond.Errorf(ErrBusy, "%s: in use by another benchseal process (it keeps being replaced)", p)
}
