package objstore

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// NewReader returns a reader of the object from off to its end in one
// streaming GET (with If-Match, invariant 3), for a single pass such as
// indexing (invariant 10). A transient failure mid-stream is resumed with a
// new GET from the byte where it stopped, retried as fetch retries, the
// FetchTimeout counted from the first failure since the last byte
// received; a body that stalls for FetchTimeout counts as a failure. It
// does not read the cache and does not take one of the FetchConcurrency
// slots, but it fills the cache with the whole blocks it passes, so that
// the reads after an index pass find them (a block the stream entered past
// its start is left out), unless the object is more than half the cache's
// bound: its blocks would evict each other, and other objects' blocks.
// Close it when done.
func (o *Object) NewReader(off int64) io.ReadCloser {
	return &stream{o: o, pos: max(off, 0), end: o.size, cache: true}
}

// NewRangeReader is NewReader of bytes [off, off+n) only: its GET asks for
// that range, so the store sends nothing past it (a pass cut into pieces
// that each stream their range, corpus.ParallelStreamer).
func (o *Object) NewRangeReader(off, n int64) io.ReadCloser {
	off = max(off, 0)
	return &stream{o: o, pos: off, end: min(off+max(n, 0), o.size), cache: true}
}

type stream struct {
	o     *Object
	pos   int64
	end   int64 // where the stream ends: the object's size, or its range's end
	body  io.ReadCloser
	err   error
	cache bool // hand the whole blocks passed to the cache
	// block gathers the bytes of the block the stream is in, from its
	// start; nil while the stream is in a block it did not enter at its
	// start (the first one, when off is not at a block start).
	block []byte
	// seg is the cache file of the segment the stream is passing, when it
	// entered it at its start and runs to its end: each block is added as
	// it completes, segNext the block it takes next, segEnd one past the
	// last.
	seg             *cacheFile
	segNext, segEnd int64
	written         sync.WaitGroup // the background cache writes of blocks stored alone
}

// keep adds the bytes b, read at s.pos-len(b), to the block being
// gathered, and hands every completed block to the cache.
func (s *stream) keep(b []byte) {
	bs := s.o.opt.blockSize
	at := s.pos - int64(len(b))
	for len(b) > 0 {
		idx := at / bs
		in := at - idx*bs
		k := min(int64(len(b)), s.o.blockLen(idx)-in)
		if in == 0 {
			s.block = s.block[:0]
			if s.block == nil {
				s.block = make([]byte, 0, bs)
			}
		}
		if s.block != nil && int64(len(s.block)) == in {
			s.block = append(s.block, b[:k]...)
			if int64(len(s.block)) == s.o.blockLen(idx) {
				if s.completed(idx, s.block) {
					s.block = s.block[:0]
				} else {
					s.block = nil // taken
				}
			}
		}
		b, at = b[k:], at+k
	}
}

// completed hands block idx (data) to the cache: it is added to the file
// of the segment the stream is passing whole, or else stored alone, which
// takes data. kept reports that data was not taken.
func (s *stream) completed(idx int64, data []byte) (kept bool) {
	if s.seg == nil || idx != s.segNext {
		s.dropSegment()
		bs := s.o.opt.blockSize
		if first, n := s.o.segment(idx); n > 1 && idx == first && s.end >= min((first+n)*bs, s.o.size) {
			s.seg, s.segNext, s.segEnd = s.o.beginSegment(first), first, first+n
		}
		if s.seg == nil {
			s.o.storeBlock(idx, data, &s.written)
			return false
		}
	}
	s.seg.add(s.o.blockKey(idx), data)
	if s.segNext++; s.segNext == s.segEnd {
		s.seg.commit()
		s.seg = nil
	}
	return true
}

// dropSegment gives up the segment file the stream did not finish: its
// blocks are fetched again when read.
func (s *stream) dropSegment() {
	if s.seg != nil {
		s.seg.abort()
		s.seg = nil
	}
}

func (s *stream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.pos >= s.end {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(int64(len(p)), s.end-s.pos)]
	op := fmt.Sprintf("stream from byte %d", s.pos)
	var n int
	err := s.o.retry(s.o.ctx, op, func(ctx context.Context) error {
		if s.body == nil {
			if err := s.open(); err != nil {
				return err
			}
		}
		// A body that stalls for FetchTimeout is a failure like a reset.
		var stalled atomic.Bool
		body := s.body
		timer := time.AfterFunc(s.o.opt.FetchTimeout, func() { stalled.Store(true); body.Close() })
		k, err := body.Read(p)
		timer.Stop()
		if stalled.Load() && err != nil {
			err = fmt.Errorf("objstore: no byte came for %v: %w", s.o.opt.FetchTimeout, io.ErrUnexpectedEOF)
		}
		n = k
		s.pos += int64(k)
		s.o.stats.fetched.Add(int64(k))
		if s.cache && s.o.size <= s.o.opt.CacheBytes/2 {
			s.keep(p[:k])
		}
		if k > 0 {
			return nil // errors after data: the next Read retries
		}
		if err == io.EOF && s.pos < s.end {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			s.body.Close()
			s.body = nil
		}
		if err == io.EOF {
			return nil
		}
		return err
	})
	if err != nil {
		s.err = err
		return n, err
	}
	if n == 0 && s.pos >= s.end {
		return 0, io.EOF
	}
	return n, nil
}

// open starts the GET from s.pos. The body outlives the attempt's
// deadline: a stream may take longer than FetchTimeout to read, so only
// the wait for the response is bounded here.
func (s *stream) open() error {
	s.o.stats.gets.Add(1)
	ctx, cancel := context.WithCancel(s.o.ctx)
	timer := time.AfterFunc(s.o.opt.FetchTimeout, cancel)
	out, err := s.o.c.s3.GetObject(ctx, &s3.GetObjectInput{
		Bucket:  &s.o.bucket,
		Key:     &s.o.key,
		Range:   aws.String(s.rangeHeader()),
		IfMatch: &s.o.etag,
	})
	timer.Stop()
	if err != nil {
		cancel()
		return err
	}
	s.body = &cancelBody{out.Body, cancel}
	return nil
}

// rangeHeader asks for the bytes from s.pos to the stream's end; open-ended
// when that is the object's end.
func (s *stream) rangeHeader() string {
	if s.end >= s.o.size {
		return fmt.Sprintf("bytes=%d-", s.pos)
	}
	return fmt.Sprintf("bytes=%d-%d", s.pos, s.end-1)
}

// Close ends the stream's GET and returns once the blocks it passed are
// written to the cache (but those of a segment it did not finish), so that
// a pass leaves the cache whole for the next process.
func (s *stream) Close() error {
	s.dropSegment()
	defer s.written.Wait()
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
	if s.err == nil {
		s.err = &Error{URL: s.o.url, Op: "stream", Msg: "read after close"}
	}
	return nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
