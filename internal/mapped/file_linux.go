//go:build linux

package mapped

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File is a file mapped read-only into memory. Its pages are the page
// cache's: they count in the process's resident set while mapped and
// touched, and Release gives them back; reading them again faults them in
// from the file.
type File struct {
	data  []byte
	once  sync.Once
	paged bool // pages come and go by chunk (need, release); else the file stays mapped whole
	f     *os.File
}

// Close lets go of the file: its pages are replaced by zero pages, which
// take no memory, so that the file (a temporary one is already unlinked)
// is freed. The address range stays reserved, and a table read after
// close reads zeros instead of faulting.
func (m *File) Close() {
	if m == nil {
		return
	}
	m.once.Do(func() {
		if m.f != nil {
			m.f.Close()
		}
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

// Open maps the file at path. The mapping outlives the file's name (a
// temporary file may be removed once mapped) and lasts until Close. A file
// larger than keepResident is paged: its cached pages are dropped and its
// pages come and go with Need and Release; a smaller one stays mapped
// whole (Need and Release do nothing).
func Open(path string, keepResident int64) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	keep := false // a paged mapping keeps the file to drop its cached pages
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() == 0 {
		return &File{data: []byte{}}, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	m := &File{data: data}
	if st.Size() <= keepResident {
		return m, nil
	}
	// The kernel keeps a file's pages in large folios (up to 2 MiB) when it
	// can, and maps a large folio whole into the process on the first
	// touch of any of its pages: a reader touching the tables of a few
	// scattered chunks would hold most of the index in its resident set.
	// So the file's cached pages are dropped (it was synced when written),
	// and with random access advised the pages come back one by one, as
	// faults and need (WILLNEED, which reads order-0 pages) bring them.
	m.paged, m.f, keep = true, f, true
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	unix.Madvise(data, unix.MADV_NOHUGEPAGE)
	unix.Madvise(data, unix.MADV_RANDOM)
	return m, nil
}

// Release lets the pages of data[off:off+n] leave memory (the range is
// widened to whole pages: a neighbour's page is faulted in again if read),
// and with evict the page cache too.
func (m *File) Release(off, n int, evict bool) {
	if lo, hi := m.pages(off, n); lo < hi {
		// Out of the resident set, and with evict out of the page cache
		// too (when no one else maps them): pages left cached come back
		// with the next fault nearby (fault-around maps the cached pages
		// around it).
		unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED)
		if evict {
			unix.Fadvise(int(m.f.Fd()), int64(lo), int64(hi-lo), unix.FADV_DONTNEED)
		}
	}
}

// Evict lets the whole pages inside data[off:off+n] (those it shares with
// a neighbour stay) leave the resident set and the page cache.
func (m *File) Evict(off, n int) {
	if m == nil || !m.paged || n <= 0 || len(m.data) == 0 {
		return
	}
	lo, hi := (off+PageSize-1)&^(PageSize-1), (off+n)&^(PageSize-1)
	if off+n >= len(m.data) {
		hi = len(m.data) // the file's last page is shared with no one
	}
	if lo < hi {
		unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED)
		unix.Fadvise(int(m.f.Fd()), int64(lo), int64(hi-lo), unix.FADV_DONTNEED)
	}
}

// pages widens data[off:off+n] to whole pages; lo >= hi when there is
// nothing to advise (an unpaged mapping, or an empty range).
func (m *File) pages(off, n int) (lo, hi int) {
	if m == nil || !m.paged || n <= 0 || len(m.data) == 0 {
		return 0, 0
	}
	return off &^ (PageSize - 1), min(len(m.data), (off+n+PageSize-1)&^(PageSize-1))
}

// Need starts reading data[off:off+n] into memory, in the background.
func (m *File) Need(off, n int) {
	if lo, hi := m.pages(off, n); lo < hi {
		unix.Madvise(m.data[lo:hi], unix.MADV_WILLNEED)
	}
}

// Resident counts the bytes of the mapping in the process's resident set
// (its Rss line in /proc/self/smaps; -1 when that cannot be read). mincore
// would not do: it tells what is in the page cache, mapped here or not.
func (m *File) Resident() int64 {
	if m == nil || len(m.data) == 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return -1
	}
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(m.data))))
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int64
			fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb)
			return kb << 10
		}
	}
	return -1
}

// Bytes returns the mapped file.
func (m *File) Bytes() []byte { return m.data }
