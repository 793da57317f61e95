// Package atomicfile writes files so that a reader, or a crash, sees the old
// content or the new content, never a part: the data go to a temporary file
// in the target's directory, which is fsynced, renamed over the target, and
// the directory is fsynced so the rename itself survives a crash.
//
// Invariants (tests cite them by number):
//
//  1. After Write returns, path holds the new data; after a failed Write or
//     a crash at any moment, it holds the old data (or is absent if it was).
//  2. No temporary file is left behind by a Write that returns.
//  3. Only regular files are replaced. A symbolic link is followed: its
//     final target is replaced, the link stays. A path that is (or whose
//     link resolves to) a device, FIFO, socket or directory is refused
//     with an error naming it, and is left as it was.
//  4. A temporary file a killed process left (.NAME.tmp-*, beside NAME) is
//     removed by the next successful Write of NAME. Two processes writing
//     the same file at once are not supported (one of them may fail).
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with data atomically. The file gets mode perm. On
// error the target is untouched and no temporary file is left behind. The
// data go out in writes of at most PieceBytes.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write for content produced by fill, which writes it to w
// (the temporary file, each write cut into pieces of at most PieceBytes)
// without holding it all in memory. An error from fill fails the write
// like an I/O error does.
func WriteFrom(path string, perm os.FileMode, fill func(w io.Writer) error) (err error) {
	if path, err = Target(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	prefix := "." + filepath.Base(path) + ".tmp-"
	f, err := os.CreateTemp(dir, prefix+"*")
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
	if err = fill(pieces{f}); err != nil {
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
	removeStale(dir, prefix)
	return nil
}

// PieceBytes bounds each write(2) of Write and WriteFrom. On Linux 6.18
// (ext4, the 2-core VMs batchprep is measured on) a write(2) of 2 MiB or
// more into the page cache costs about ten times the system time of the
// same bytes written in smaller pieces: 461 MB in 8 MiB or 2 MiB writes
// took 0.6-1.2 s, in 1 MiB or 2 MiB-less-4-KiB writes 0.08-0.12 s
// (BenchmarkWrite). Elsewhere a write per MiB costs nothing measurable.
const PieceBytes = 1 << 20

// Pieces returns a writer that passes each write on to w in pieces of at
// most PieceBytes, for large writes to a file that is not replaced
// atomically (standard output redirected to a file).
func Pieces(w io.Writer) io.Writer { return pieces{w} }

// pieces writes to w in pieces of at most PieceBytes. io.Copy from a file
// into it still reaches the file's ReadFrom (copy_file_range, which the
// kernel does in small pieces of its own).
type pieces struct{ w io.Writer }

func (p pieces) Write(b []byte) (n int, err error) {
	for len(b) > 0 {
		k, err := p.w.Write(b[:min(len(b), PieceBytes)])
		n += k
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

func (p pieces) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := p.w.(io.ReaderFrom); ok {
		if _, file := r.(*os.File); file {
			return rf.ReadFrom(r)
		}
	}
	return io.Copy(struct{ io.Writer }{p}, r) // a WriterTo writes through p too
}

// removeStale removes the temporary files of earlier, killed writes of the
// same target (invariant 4).
func removeStale(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Target returns the file Write(path) replaces: path itself, or the final
// target of a symbolic link at path. It refuses a path that is not a
// regular file (invariant 3); an absent path is fine.
func Target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return path, nil
	}
	if err != nil {
		return "", err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if os.IsNotExist(err) {
			// A dangling link: write where it points.
			link, lerr := os.Readlink(path)
			if lerr != nil {
				return "", lerr
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(path), link)
			}
			return Target(link)
		}
		if err != nil {
			return "", err
		}
		if fi, err = os.Stat(resolved); err != nil {
			return "", err
		}
		path = resolved
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is %s, not a regular file; refusing to replace it", path, describeMode(fi.Mode()))
	}
	return path, nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable. It is best effort: some file systems refuse directory fsync.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
