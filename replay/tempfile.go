package replay

import "os"

// createUnlinked creates a temporary file (os.TempDir: TMPDIR) and
// unlinks it at once: the open file stays readable and writable and is
// freed when closed or when the process ends, however it ends, so a
// killed replay leaves nothing behind. name is the file's name only when
// the system refused to unlink an open file; closeUnlinked then removes
// it. Once unlinked the name is free for another file, which must never
// be removed in its place.
func createUnlinked(pattern string) (f *os.File, name string, err error) {
	f, err = os.CreateTemp("", pattern)
	if err != nil {
		return nil, "", err
	}
	if os.Remove(f.Name()) != nil {
		name = f.Name()
	}
	return f, name, nil
}

// closeUnlinked closes a file of createUnlinked and removes the name it
// returned, if any.
func closeUnlinked(f *os.File, name string) {
	_ = f.Close()
	if name != "" {
		_ = os.Remove(name)
	}
}
