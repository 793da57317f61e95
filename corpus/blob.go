package corpus

import (
	"io"
	"io/fs"
)

// Blob is the stored bytes of a corpus as its readers see them: a local
// *os.File, or an object in object storage behind the same methods. A
// reader reads a Blob only with ReadAt, so reads may run concurrently.
// Stat's size is the blob's size and its mode is regular for an object.
type Blob interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

// Versioned is a Blob that names the version of its content (an object's
// ETag): two opens with the same version read the same bytes. Index
// caches key on it where a local file has its modification time.
type Versioned interface {
	Version() string
}

// Hinter is a Blob that can start fetching [off, off+n) before it is read
// (an object's prefetch). A local file is hinted through the kernel.
type Hinter interface {
	Hint(off, n int64)
}

// Streamer is a Blob that reads a long range faster as one stream than by
// ReadAt calls (an object: one GET instead of a request per block). An
// index pass reads each of its pieces through it.
type Streamer interface {
	NewReader(off int64) io.ReadCloser
}

// ParallelStreamer is a Streamer whose streams are each capped below the
// blob's bandwidth (an object: one connection to a store): a pass that
// reads it all runs Streams of them at once, each over the range it needs
// (NewRangeReader: bytes [off, off+n), nothing sent past them).
type ParallelStreamer interface {
	Streamer
	NewRangeReader(off, n int64) io.ReadCloser
	Streams() int
}

// Lender is a Blob that can hand out a range in a buffer of its own, sparing
// the copy ReadAt makes (a file read around the page cache reads into
// aligned buffers). release hands the buffer back; data must not be used
// after it.
type Lender interface {
	Borrow(off, n int64) (data []byte, release func(), err error)
}
