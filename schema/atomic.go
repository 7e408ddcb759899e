package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data (or, when path is a device, a
// pipe or a socket, writes to it: NotRegular): it writes a temporary file in the
// same directory with mode perm, syncs it, renames it over path and syncs
// the directory, so a reader (or a crash) sees either the old file or the
// whole new one, never a part, and a private file is never readable by
// others, not even for a moment. Temporary files that killed writes of
// the same path left behind are removed first (ReclaimStale).
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	if NotRegular(path) {
		return writeThrough(path, data)
	}
	dir := filepath.Dir(path)
	ReclaimStale(path) // best effort: a leftover never blocks the write
	f, _, err := NewStagingFile(path, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	SyncDir(dir)
	return nil
}

// NotRegular reports whether path names something other than a regular
// file (following links): /dev/null, /dev/stdout, a named pipe. Such a
// path is written to, never replaced: a rename over it would put a
// regular file where the device was (benchseal run as root with
// --out /dev/null once turned /dev/null into a file every later command
// on the machine wrote into), and there is no old content to keep.
func NotRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// writeThrough writes data to the existing non-regular file path.
func writeThrough(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.Write(data)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
