package serve

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ringHeader is the bytes before a ring's data: the reader's release
// position (a uint64) at offset 0, the rest unused.
const ringHeader = 4096

// ring is a call's shared memory (SequenceRequest.shared_memory): a memory
// file that the server writes messages' arrays into and the reader maps,
// copies from and releases (SharedArrays). Positions only grow; the data
// offset of a position is position % size.
type ring struct {
	fd      int
	mem     []byte // header and data, mapped
	size    uint64
	written uint64 // the end of the last reservation
	path    string
	// stall, when positive, bounds how long a wait for the reader lasts
	// (errRingStalled): the stall timeout (invariant 13).
	stall time.Duration
}

// newRing creates a ring of size data bytes.
func newRing(size int) (*ring, error) {
	fd, err := unix.MemfdCreate("batchprep-ring", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating the shared memory: %v", err)
	}
	if err := unix.Ftruncate(fd, int64(ringHeader+size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sizing the shared memory: %v", err)
	}
	mem, err := unix.Mmap(fd, 0, ringHeader+size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mapping the shared memory: %v", err)
	}
	return &ring{fd: fd, mem: mem, size: uint64(size), path: fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd)}, nil
}

// released is the position up to which the reader has copied the data out.
func (r *ring) released() uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.mem[0])))
}

// reserve returns the position and the data bytes for the next n bytes
// (n <= size), once the reader has released them: it waits, checking ctx,
// while they still hold data the reader has not copied.
func (r *ring) reserve(ctx context.Context, n int) (uint64, []byte, error) {
	pos := r.written
	if off := pos % r.size; off+uint64(n) > r.size {
		pos += r.size - off // the data never wraps: skip the end
	}
	// The bytes to reuse held positions up to end - size: the reader must
	// have released those (all that was written, when the end was skipped).
	end := pos + uint64(n)
	if end > r.size {
		if err := r.wait(ctx, min(end-r.size, r.written)); err != nil {
			return 0, nil, err
		}
	}
	r.written = end
	off := ringHeader + pos%r.size
	return pos, r.mem[off : off+uint64(n) : off+uint64(n)], nil
}

// wait returns once the reader has released the data up to position at
// (polling, as the reader only writes a number into the shared memory), or
// ctx's error, or errRingStalled when the reader releases nothing for
// r.stall.
func (r *ring) wait(ctx context.Context, at uint64) error {
	start, last := time.Now(), r.released()
	for wait := 20 * time.Microsecond; ; {
		rel := r.released()
		if rel > r.written {
			return fmt.Errorf("the reader released position %d, past the %d bytes written", rel, r.written)
		}
		if rel >= at {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if rel != last {
			start, last = time.Now(), rel
		} else if r.stall > 0 && time.Since(start) >= r.stall {
			return errRingStalled
		}
		time.Sleep(wait)
		if wait < time.Millisecond {
			wait *= 2
		}
	}
}

// drain waits until the reader has released everything written: the
// reader opens the ring's path while the server holds the file open.
func (r *ring) drain(ctx context.Context) error { return r.wait(ctx, r.written) }

// close unmaps the ring and closes its file; a reader's mapping stays.
func (r *ring) close() {
	unix.Munmap(r.mem)
	unix.Close(r.fd)
}
