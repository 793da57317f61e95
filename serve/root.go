package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// dataRoot confines the paths a request names to the server's data
// directories (invariant 10). A relative path is taken inside the first
// directory; an absolute one must lie in one of them. Symbolic links are
// followed only while they stay inside their directory (os.Root), or when
// they lead into another of the data directories.
type dataRoot struct {
	dirs  []string // absolute, symbolic links resolved
	roots []*os.Root
}

// newDataRoot opens the data directories dirs; none means ".".
func newDataRoot(dirs []string) (*dataRoot, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	d := &dataRoot{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			d.close()
			return nil, fmt.Errorf("data directory %s: %w", dir, err)
		}
		r, err := os.OpenRoot(abs)
		if err != nil {
			d.close()
			return nil, fmt.Errorf("data directory %s: %w", dir, err)
		}
		d.dirs, d.roots = append(d.dirs, abs), append(d.roots, r)
	}
	return d, nil
}

func (d *dataRoot) close() {
	for _, r := range d.roots {
		r.Close()
	}
}

// within reports whether the clean absolute path p is dir or below it.
func within(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

func (d *dataRoot) inAny(p string) bool {
	for _, dir := range d.dirs {
		if within(dir, p) {
			return true
		}
	}
	return false
}

// refused is the one answer for a path outside the data directories, one
// that escapes them through a link, and one the server may not read: the
// client cannot tell which, nor whether the file exists.
func refused(field, p string) error {
	return status.Errorf(codes.PermissionDenied,
		"%s: %q is not a readable file under the server's data directories (serve --data-dir)", field, p)
}

// resolve returns the real path of the file p names and its information,
// following links, or a status error naming field (invariant 10). It opens
// nothing but directories.
func (d *dataRoot) resolve(field, p string) (string, fs.FileInfo, error) {
	if p == "" {
		return "", nil, status.Errorf(codes.InvalidArgument, "%s: empty path", field)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", nil, status.Errorf(codes.InvalidArgument, "%s: the path holds a NUL byte", field)
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(d.dirs[0], full)
	}
	full = filepath.Clean(full)
	for i, dir := range d.dirs {
		if !within(dir, full) {
			continue
		}
		rel, err := filepath.Rel(dir, full)
		if err != nil {
			break
		}
		info, err := d.roots[i].Stat(rel)
		if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return "", nil, status.Errorf(codes.NotFound, "%s: %q: no such file in the server's data directories", field, p)
		}
		if err != nil {
			break // an escape, or unreadable: a link into another data directory may still do
		}
		real, err := filepath.EvalSymlinks(full)
		if err != nil || !d.inAny(real) {
			break // changed meanwhile
		}
		return real, info, nil
	}
	// A link from one data directory into another.
	real, err := filepath.EvalSymlinks(full)
	if err != nil || !d.inAny(real) {
		return "", nil, refused(field, p)
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", nil, refused(field, p)
	}
	return real, info, nil
}

// openRegular resolves p and opens it for reading, refusing anything but a
// regular file before opening it (a FIFO would block the open, a device
// never ends). The open does not block and the file opened is checked to be
// the one examined. The caller closes the file.
func (d *dataRoot) openRegular(field, p string) (*os.File, string, error) {
	real, info, err := d.resolve(field, p)
	if err != nil {
		return nil, "", err
	}
	if err := needRegular(field, p, info); err != nil {
		return nil, "", err
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", status.Errorf(codes.NotFound, "%s: %q: no such file in the server's data directories", field, p)
		}
		return nil, "", refused(field, p)
	}
	got, err := f.Stat()
	if err != nil || !got.Mode().IsRegular() || !os.SameFile(got, info) {
		f.Close()
		return nil, "", status.Errorf(codes.Aborted, "%s: %q changed while it was opened; try again", field, p)
	}
	return f, real, nil
}

// needRegular refuses a file that is not a regular file, naming its kind.
func needRegular(field, p string, info fs.FileInfo) error {
	m := info.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return status.Errorf(codes.InvalidArgument, "%s: %q is %s, not a regular file", field, p, kind)
}

// dirUnder checks that p names a directory under the data directories (a
// graph store's entity_path or an edge path) and returns its real path.
func (d *dataRoot) dirUnder(field, p string) (string, error) {
	real, info, err := d.resolve(field, p)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", status.Errorf(codes.InvalidArgument, "%s: %q is not a directory", field, p)
	}
	return real, nil
}
