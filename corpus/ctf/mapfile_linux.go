//go:build linux

package ctf

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapping is an index file mapped read-only into memory. Its pages are the
// page cache's: they count in the process's resident set while mapped and
// touched, and Release gives them back; reading them again faults them in
// from the file.
type mapping struct {
	data []byte
	once sync.Once
}

// close lets go of the file: its pages are replaced by zero pages, which
// take no memory, so that the file (a temporary one is already unlinked)
// is freed. The address range stays reserved, and a table read after
// close reads zeros instead of faulting.
func (m *mapping) close() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		if len(m.data) == 0 {
			return
		}
		p := unsafe.Pointer(unsafe.SliceData(m.data))
		_, _, e := unix.Syscall6(unix.SYS_MMAP, uintptr(p), uintptr(len(m.data)), unix.PROT_READ,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0)
		if e != 0 {
			unix.Munmap(m.data) // cannot happen for a range we mapped
		}
	})
}

// mapFile maps the file at path. The mapping outlives the file's name (a
// temporary index file is removed once mapped) and lasts until close (the
// Reader's Close): the tables are views of it.
func mapFile(path string) (*mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("ctf: %s: not a regular file", path)
	}
	if st.Size() == 0 {
		return &mapping{data: []byte{}}, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ctf: mapping %s: %w", path, err)
	}
	return &mapping{data: data}, nil
}

// release lets the pages of data[off:off+n] leave memory (the range is
// widened to whole pages: a neighbour's page is faulted in again if read).
func (m *mapping) release(off, n int) {
	if m == nil || n <= 0 || len(m.data) == 0 {
		return
	}
	lo := off &^ (pageSize - 1)
	hi := min(len(m.data), (off+n+pageSize-1)&^(pageSize-1))
	if lo < hi {
		unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED)
	}
}
