// Package atomicfile writes files so that a reader, or a crash, sees the old
// content or the new content, never a part: the data go to a temporary file
// in the target's directory, which is fsynced, renamed over the target, and
// the directory is fsynced so the rename itself survives a crash.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data atomically. The file gets mode perm. On
// error the target is untouched and no temporary file is left behind.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	SyncDir(dir)
	return nil
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable. It is best effort: some file systems refuse directory fsync.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
