package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// StagedDir is an output directory being built in a locked staging
// directory beside its destination (NewStagingDir) and moved into place by
// one rename when complete. It is the one way benchseal writes a directory
// output — run directories (CreateRun) and bundle layouts (artifact) — so a
// failed or killed write never leaves a partial output at the destination,
// and a kill leaves only a staging entry that the next write reclaims.
type StagedDir struct {
	dest string
	st   *Staging
	done bool
}

// NewStagedDir starts building the directory dest. It does not look at
// dest itself: Publish checks it.
func NewStagedDir(dest string) (*StagedDir, error) {
	st, err := NewStagingDir(dest)
	if err != nil {
		return nil, err
	}
	return &StagedDir{dest: dest, st: st}, nil
}

// Path returns the staging directory being written.
func (d *StagedDir) Path() string { return d.st.Path }

// Join returns the staging path of rel, a slash-separated path inside the
// directory.
func (d *StagedDir) Join(rel string) string {
	return filepath.Join(d.st.Path, filepath.FromSlash(rel))
}

// WriteFile writes data to rel inside the directory (creating its parent
// directories) and syncs it.
func (d *StagedDir) WriteFile(rel string, data []byte) error {
	p := d.Join(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Publish makes the staged directory the destination: it syncs every file
// and directory in it, renames it onto dest and syncs dest's parent. dest
// must not exist; when emptyOK is set it may also be an empty directory,
// which is replaced. On any error the staged directory is removed and dest
// is left as it was. Publish or Discard must be called exactly once.
func (d *StagedDir) Publish(emptyOK bool) error {
	if d.done {
		return errors.New("staged directory already published or discarded")
	}
	defer d.Discard()
	if err := d.Sync(); err != nil {
		return err
	}
	if err := checkFreeDest(d.dest, emptyOK); err != nil {
		return err
	}
	if emptyOK {
		os.Remove(d.dest) // an empty directory, if any
	}
	if err := os.Rename(d.st.Path, d.dest); err != nil {
		return err
	}
	d.done = true
	d.st.Release()
	return SyncDir(filepath.Dir(filepath.Clean(d.dest)))
}

// Sync syncs every file and directory of the staged directory, so that a
// rename of it (Publish, or an exchange the caller makes) cannot expose a
// file whose data or entry a crash would lose.
func (d *StagedDir) Sync() error {
	if err := syncTree(d.st.Path); err != nil {
		return fmt.Errorf("sync %s: %w", d.dest, err)
	}
	return nil
}

// Discard removes the staged directory and drops its lock. It does nothing
// after Publish succeeded, so it can be deferred.
func (d *StagedDir) Discard() {
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.st.Path)
	d.st.Release()
}

// checkFreeDest returns an error naming dest when it exists (and, with
// emptyOK, is not an empty directory).
func checkFreeDest(dest string, emptyOK bool) error {
	fi, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if emptyOK && fi.IsDir() {
		entries, err := os.ReadDir(dest)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		return fmt.Errorf("%s: directory exists and is not empty (refusing to overwrite)", dest)
	}
	return fmt.Errorf("%s already exists (refusing to overwrite)", dest)
}

// syncTree syncs every regular file of the tree at root, then every
// directory, deepest first, so that after it returns a crash cannot lose
// an entry or the data of a file in it.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case e.IsDir():
			dirs = append(dirs, p)
		case e.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			err = f.Sync()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, p := range dirs {
		if err := SyncDir(p); err != nil {
			return err
		}
	}
	return nil
}
