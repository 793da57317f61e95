// Package direct reads a local file around the page cache (O_DIRECT on
// Linux), for corpora larger than memory: a sweep of such a file finds
// none of it cached anyway, and filling and reclaiming the page cache
// costs the reader more system time than the disk costs it.
package direct

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"unsafe"

	"github.com/batchprep/batchprep/internal/procs"
)

// align is the alignment of offsets, lengths and buffers of direct reads.
const align = 4096

// File reads f's bytes with direct reads. Hint queues a range a caller
// will read soon; goroutines of the File read queued ranges ahead, in the
// order they were hinted, while the bytes read ahead and not yet taken
// stay under a limit, so that the disk works while the caller parses. A
// range hinted again before its read started is wanted sooner than
// thought: it moves to a second queue, read first, with a limit of its own
// (so that ranges read ahead for later never keep out the ones a caller
// is about to take).
type File struct {
	f    *os.File // the file as opened (Stat, Close)
	d    *os.File // the same file opened for direct reads
	size int64

	mu    sync.Mutex
	cond  *sync.Cond
	ahead map[int64]*pending // by the range's offset: queued, reading or read
	// The queues of ranges hinted and not started, oldest first:
	// [0] hinted once, [1] (urgent) hinted again before they started.
	queue  [2][]*pending
	done   []*pending // read and not taken, oldest first
	held   [2]int64   // bytes reading or read, not taken, by queue
	limit  int64      // of each queue
	reads  int64      // ReadAt calls so far
	bufs   chan []byte
	closed bool
	wg     sync.WaitGroup

	// For tests: ReadAt calls served by a read ahead, and ranges read
	// ahead then dropped unread.
	served, dropped int64
}

type pending struct {
	off, n  int64
	q       int // its queue: 0, or 1 once hinted again (urgent)
	started bool
	at      int64  // File.reads when its read ended
	buf     []byte // the aligned buffer; data at buf[off%align:][:n]
	err     error
	ready   chan struct{}
}

// Readers is how many direct reads run ahead at once.
const Readers = 4

// Open wraps f, a regular file, for direct reads with at most ahead bytes
// read ahead. It fails when the file system refuses direct reads.
func Open(f *os.File, ahead int64) (*File, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	d, err := openDirect(f.Name())
	if err != nil {
		return nil, err
	}
	// The readers block in reads: processors of their own, so that the
	// parse keeps every core (internal/procs).
	procs.Reserve(Readers)
	x := &File{f: f, d: d, size: info.Size(), ahead: map[int64]*pending{}, limit: ahead,
		// Enough buffers kept for every range the limit lets be read ahead
		// or reading, and for the callers' reads: a steady read allocates
		// none.
		bufs: make(chan []byte, int(ahead>>20)+2*Readers+4)}
	x.cond = sync.NewCond(&x.mu)
	for range Readers {
		x.wg.Add(1)
		go x.reader()
	}
	return x, nil
}

// reader reads queued ranges, the urgent ones first, while the bytes
// ahead of each queue stay under the limit.
func (x *File) reader() {
	defer x.wg.Done()
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		var p *pending
		for !x.closed {
			if p = x.nextLocked(); p != nil {
				break
			}
			x.cond.Wait()
		}
		if x.closed {
			return
		}
		p.started = true
		x.held[p.q] += p.n
		x.mu.Unlock()
		p.buf, p.err = x.read(p.off, p.n)
		x.mu.Lock()
		close(p.ready)
		if x.ahead[p.off] == p {
			p.at = x.reads
			x.done = append(x.done, p)
		}
	}
}

// nextLocked takes the range to read next off its queue: the oldest
// urgent one, else the oldest hinted one, if its queue's limit has room.
func (x *File) nextLocked() *pending {
	for i := 1; i >= 0; i-- {
		if q := x.queue[i]; len(q) > 0 && x.held[i]+q[0].n <= x.limit {
			x.queue[i] = q[1:]
			return q[0]
		}
	}
	return nil
}

// blockedLocked reports whether a queue waits for its limit.
func (x *File) blockedLocked() bool {
	for i, q := range x.queue {
		if len(q) > 0 && x.held[i]+q[0].n > x.limit {
			return true
		}
	}
	return false
}

func (x *File) dropLocked(p *pending) {
	x.dropped++
	delete(x.ahead, p.off)
	x.done = remove(x.done, p)
	x.held[p.q] -= p.n
	if p.buf != nil {
		x.putBuffer(p.buf)
		p.buf = nil
	}
}

func remove(ps []*pending, p *pending) []*pending {
	for i, q := range ps {
		if q == p {
			return append(ps[:i], ps[i+1:]...)
		}
	}
	return ps
}

// read reads [off, off+n) into an aligned buffer and returns it: the data
// start at off%align.
func (x *File) read(off, n int64) ([]byte, error) {
	lo := off &^ (align - 1)
	hi := min((off+n+align-1)&^(align-1), (x.size+align-1)&^(align-1))
	buf := x.buffer(hi - lo)
	got := 0
	for int64(got) < hi-lo {
		k, err := x.d.ReadAt(buf[got:hi-lo], lo+int64(got))
		got += k
		if err == io.EOF {
			break
		}
		if err != nil {
			x.putBuffer(buf)
			return nil, err
		}
		if k == 0 {
			break
		}
	}
	if int64(got) < off-lo+n {
		x.putBuffer(buf)
		return nil, io.ErrUnexpectedEOF
	}
	return buf, nil
}

// buffer returns an aligned buffer of n bytes, a kept one when it is large
// enough. New buffers are rounded up to a multiple of bufferStep, so that
// one serves the chunks a little larger than the one it was made for.
func (x *File) buffer(n int64) []byte {
	select {
	case b := <-x.bufs:
		if int64(cap(b)) >= n {
			return b[:n]
		}
	default:
	}
	size := (n + bufferStep) / bufferStep * bufferStep
	raw := make([]byte, size+align)
	at := align - int(uintptrOf(raw)%align)
	if at == align {
		at = 0
	}
	return raw[at : at+int(n) : at+int(size)]
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// bufferStep rounds the size of new buffers.
const bufferStep = 256 << 10

func (x *File) putBuffer(b []byte) {
	select {
	case x.bufs <- b:
	default:
	}
}

// Hint queues [off, off+n) to be read ahead. A range hinted before and
// not started yet moves to the urgent queue.
func (x *File) Hint(off, n int64) {
	if n <= 0 || off < 0 || off+n > x.size {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	if p := x.ahead[off]; p != nil {
		if !p.started && p.q == 0 && p.n == n {
			x.queue[0] = remove(x.queue[0], p)
			p.q = 1
			x.queue[1] = append(x.queue[1], p)
			x.cond.Signal()
		}
		return
	}
	p := &pending{off: off, n: n, ready: make(chan struct{})}
	x.ahead[off] = p
	x.queue[0] = append(x.queue[0], p)
	x.cond.Signal()
}

// ReadAt reads len(p) bytes at off: from a read Hint queued for off, or
// with a direct read of its own.
func (x *File) ReadAt(p []byte, off int64) (int, error) {
	if off >= 0 && off >= x.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), x.size-off)
	buf, err := x.take(off, n)
	if err != nil {
		return 0, err
	}
	at := off % align
	copy(p, buf[at:at+n])
	x.putBuffer(buf)
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// Borrow returns [off, off+n) as ReadAt would read it, in the File's own
// buffer, and a func that hands the buffer back (corpus.Lender): the
// caller parses the bytes where the disk put them.
func (x *File) Borrow(off, n int64) ([]byte, func(), error) {
	if off+n > x.size {
		return nil, nil, fmt.Errorf("direct: %s: [%d, %d) is past the end (%d bytes): %w",
			x.f.Name(), off, off+n, x.size, io.ErrUnexpectedEOF)
	}
	buf, err := x.take(off, n)
	if err != nil {
		return nil, nil, err
	}
	at := off % align
	return buf[at : at+n : at+n], func() { x.putBuffer(buf) }, nil
}

// take returns an aligned buffer holding [off, off+n) (from off%align):
// from a read Hint queued for off, or with a direct read of its own.
func (x *File) take(off, n int64) ([]byte, error) {
	if off < 0 {
		return nil, errors.New("direct: negative offset")
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil, fmt.Errorf("direct: %s: %w", x.f.Name(), os.ErrClosed)
	}
	h := x.ahead[off]
	if h != nil && h.n >= n {
		// Taken: neither a reader nor a drop touches it from here.
		delete(x.ahead, off)
		if h.started {
			x.served++
			x.done = remove(x.done, h)
			x.held[h.q] -= h.n
			x.cond.Broadcast()
		} else {
			x.queue[h.q] = remove(x.queue[h.q], h)
			h = nil
		}
	} else {
		h = nil
	}
	x.reads++
	if h == nil && len(x.done) > 0 && x.blockedLocked() &&
		x.reads-x.done[0].at > 2*int64(len(x.done))+16 {
		// A range read without a hint while the ranges read ahead fill a
		// queue's limit, the oldest of them read long ago: it was passed
		// over (a seek). Drop it.
		x.dropLocked(x.done[0])
		x.cond.Broadcast()
	}
	x.mu.Unlock()
	var buf []byte
	var err error
	if h != nil {
		<-h.ready
		buf, err = h.buf, h.err
	} else {
		buf, err = x.read(off, n)
	}
	if err != nil {
		return nil, fmt.Errorf("direct: %s: %w", x.f.Name(), err)
	}
	return buf, nil
}

// NewReader reads the file from off to its end through the page cache
// (corpus.Streamer): an index pass reads it once, in order, which the
// kernel's readahead serves best.
func (x *File) NewReader(off int64) io.ReadCloser {
	return io.NopCloser(io.NewSectionReader(x.f, off, max(x.size-off, 0)))
}

// AheadBytes is the most the File reads ahead of its callers.
func (x *File) AheadBytes() int64 { return x.limit }

// Stat is the file's.
func (x *File) Stat() (fs.FileInfo, error) { return x.f.Stat() }

// Close stops the reads ahead and closes the file.
func (x *File) Close() error {
	if x.Detach() {
		return x.f.Close()
	}
	return nil
}

// Detach stops the reads ahead and closes what the File opened, leaving
// the file it wraps open for its owner (a caller that could not use the
// File); it reports whether the File was still open.
func (x *File) Detach() bool {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return false
	}
	x.closed = true
	x.cond.Broadcast()
	x.mu.Unlock()
	x.wg.Wait()
	x.d.Close()
	return true
}
