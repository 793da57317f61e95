package objstore

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestOpen: the HEAD gives size and ETag.
func TestOpen(t *testing.T) {
	s, data := serve(t, 10000)
	o := open(t, testOptions(t))
	if o.Size() != int64(len(data)) || o.URL() != testURL {
		t.Fatalf("size %d url %s", o.Size(), o.URL())
	}
	if etag := s.Put(testBucket, "other", data); o.ETag() != etag {
		t.Fatalf("ETag %s; the same bytes put again have %s", o.ETag(), etag)
	}
}

// TestReadAtRandomRanges: invariant 2, as a property over random ranges
// (some past the end, some inside one block, some across many), read
// concurrently by several goroutines.
func TestReadAtRandomRanges(t *testing.T) {
	_, data := serve(t, 200_000)
	o := open(t, testOptions(t))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for range 50 {
				off := r.Int64N(int64(len(data)) + 10)
				n := 1 + r.Int64N(3*testBlock)
				p := make([]byte, n)
				k, err := o.ReadAt(p, off)
				want := data[min(off, int64(len(data))):min(off+n, int64(len(data)))]
				if string(p[:k]) != string(want) {
					t.Errorf("ReadAt(%d bytes at %d): wrong bytes", n, off)
					return
				}
				if (k < int(n)) != (err == io.EOF) || (err != nil && err != io.EOF) {
					t.Errorf("ReadAt(%d bytes at %d) = %d, %v", n, off, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := o.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("negative offset accepted")
	}
}

// TestOneGetPerRead: invariant 6. A read of several uncached blocks is one
// GET; reading it again, from another Object on the same cache, is none.
func TestOneGetPerRead(t *testing.T) {
	_, data := serve(t, 100_000)
	opt := testOptions(t)
	o := open(t, opt)
	readRange(t, o, data, 1000, 5*testBlock)
	readRange(t, o, data, 30_000, 3*testBlock+7)
	if g := o.Stats().Gets; g != 2 {
		t.Fatalf("two reads made %d GETs", g)
	}
	o.Close()
	o2 := open(t, opt)
	readRange(t, o2, data, 1000, 5*testBlock)
	readRange(t, o2, data, 30_000, 3*testBlock+7)
	if st := o2.Stats(); st.Gets != 0 || st.BytesFromCache == 0 {
		t.Fatalf("cached reads: %+v; want no GET", st)
	}
}

// TestBlocksLooksAfterClaiming: a fetch may end, write its block to the
// cache and leave inflight between a read's look at a block and its claim
// of it (as TestPrefetchThenRead once saw in CI). The claim then looks in
// the cache itself, so that no block is fetched twice.
func TestBlocksLooksAfterClaiming(t *testing.T) {
	_, data := serve(t, 100_000)
	opt := testOptions(t)
	o := open(t, opt)
	readRange(t, o, data, 0, 3*testBlock)
	o.Close() // waits for the cache writes
	o2 := open(t, opt)
	got, err := o2.blocks([]int64{0, 1, 2}) // as if the look had missed them
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if string(b) != string(data[int64(i)*testBlock:int64(i+1)*testBlock]) {
			t.Fatalf("block %d: wrong bytes", i)
		}
	}
	if st := o2.Stats(); st.Gets != 0 {
		t.Fatalf("blocks in the cache fetched again: %+v", st)
	}
}

// TestPrefetchThenRead: invariants 6 and 7. Reads after a Prefetch of
// their range cost no GET beyond the prefetch's; the proxy never sees more
// GETs in flight than FetchConcurrency.
func TestPrefetchThenRead(t *testing.T) {
	_, p, data := serveProxied(t, 400_000)
	opt := testOptions(t)
	opt.FetchConcurrency = 3
	o := open(t, opt)
	p.SetDelay(30e6) // 30 ms per request, so prefetches overlap
	const chunk = 2 * testBlock
	var chunks int64
	for off := int64(0); off < int64(len(data)); off += chunk {
		o.Prefetch(off, chunk)
		chunks++
	}
	for off := int64(0); off < int64(len(data)); off += chunk {
		readRange(t, o, data, off, chunk)
	}
	if g := o.Stats().Gets; g != chunks {
		t.Fatalf("%d chunks prefetched and read with %d GETs; want one each", chunks, g)
	}
	if m := p.MaxInFlight(); m > 3 || m < 2 {
		t.Fatalf("max GETs in flight %d; want 2..3 (the bound is 3)", m)
	}
}

// TestStream: invariant 10.
func TestStream(t *testing.T) {
	_, data := serve(t, 300_000)
	opt := testOptions(t)
	o := open(t, opt)
	r := o.NewReader(1234)
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != string(data[1234:]) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}
	if g := o.Stats().Gets; g != 1 {
		t.Fatalf("stream made %d GETs; want 1", g)
	}
	// The stream left every block it passed whole in the cache: another
	// Object reads them without a request, and fetches only the first.
	o.Close()
	o2 := open(t, opt)
	readRange(t, o2, data, testBlock, int64(len(data))-testBlock)
	if g := o2.Stats().Gets; g != 0 {
		t.Fatalf("reading what a stream passed made %d GETs; want 0", g)
	}
	readRange(t, o2, data, 0, testBlock)
	if g := o2.Stats().Gets; g != 1 {
		t.Fatalf("reading the block the stream entered mid-way made %d GETs; want 1", g)
	}
}

// TestClosed: reads after Close fail, naming the object.
func TestClosed(t *testing.T) {
	serve(t, 1000)
	o, err := Open(context.Background(), testURL, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	_, err = o.ReadAt(make([]byte, 10), 0)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), testURL) {
		t.Fatalf("read after close: %v", err)
	}
}

// TestCloseDuringReads: Close while reads and prefetches run waits for
// them; each read either succeeds with the right bytes or says the object
// is closed.
func TestCloseDuringReads(t *testing.T) {
	_, data := serve(t, 200_000)
	o, err := Open(context.Background(), testURL, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 40 {
				off := int64((g*40+i)*1000) % int64(len(data)-testBlock)
				o.Prefetch(off+testBlock, testBlock)
				p := make([]byte, testBlock)
				if _, err := o.ReadAt(p, off); err != nil {
					if !strings.Contains(err.Error(), "closed") {
						t.Errorf("read at %d: %v", off, err)
					}
					return
				}
				if string(p) != string(data[off:off+testBlock]) {
					t.Errorf("read at %d: wrong bytes", off)
					return
				}
			}
		})
	}
	o.Close()
	wg.Wait()
}

// TestSmallReadsKeepThePiece: a run of small reads in a cached block reads
// the piece they fall in once (the Object keeps it), a small read across
// two pieces reads both, and a large read reads only the bytes it asks
// for, also of a block it ends a little way into.
func TestSmallReadsKeepThePiece(t *testing.T) {
	_, data := serve(t, 600_000)
	opt := testOptions(t)
	opt.blockSize = 4 * pieceLen
	o := open(t, opt)
	readRange(t, o, data, 0, int64(len(data))) // fetch and cache every block
	o.Close()
	o2 := open(t, opt)
	for i := range 100 {
		readRange(t, o2, data, int64(i*100), 50)
	}
	if got := o2.Stats().BytesFromCache; got != pieceLen {
		t.Errorf("100 small reads in piece 0 read %d bytes of cache files; want the piece, %d", got, pieceLen)
	}
	readRange(t, o2, data, 2*pieceLen-10, 20) // pieces 1 and 2
	readRange(t, o2, data, 2*pieceLen+10, 20) // piece 2, kept
	if got := o2.Stats().BytesFromCache - pieceLen; got != 2*pieceLen {
		t.Errorf("small reads in pieces 1 and 2 read %d bytes of cache files; want the two pieces, %d", got, 2*pieceLen)
	}
	readRange(t, o2, data, 4*pieceLen+10, pieceLen+20)
	if got := o2.Stats().BytesFromCache - 3*pieceLen; got != pieceLen+20 {
		t.Errorf("a read of %d bytes in block 1 read %d bytes of its cache file", pieceLen+20, got)
	}
	before := o2.Stats().BytesFromCache
	readRange(t, o2, data, 5*pieceLen, 3*pieceLen+100) // blocks 1 and 2
	if got := o2.Stats().BytesFromCache - before; got != 3*pieceLen+100 {
		t.Errorf("a read of %d bytes ending 100 bytes into block 2 read %d bytes of cache files", 3*pieceLen+100, got)
	}
	if g := o2.Stats().Gets; g != 0 {
		t.Errorf("%d GETs for cached blocks", g)
	}
}

// TestStreamSkipsTheCacheOfALargeObject: invariant 10. A stream of an
// object larger than half the cache's bound leaves no block in the cache.
func TestStreamSkipsTheCacheOfALargeObject(t *testing.T) {
	_, data := serve(t, 300_000)
	opt := testOptions(t)
	opt.CacheBytes = 500_000
	o := open(t, opt)
	r := o.NewReader(0)
	if got, err := io.ReadAll(r); err != nil || string(got) != string(data) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}
	r.Close()
	o.Close()
	if total, files := dirBytes(t, opt.CacheDir); files != 0 {
		t.Fatalf("the stream left %d files (%d bytes) in the cache", files, total)
	}
}

// TestRangeStream: invariant 10 for a range. NewRangeReader streams the
// bytes of its range in one GET that asks for them only (the store sends
// nothing past its end), resumes a cut body within the range, and caches
// the whole blocks it passes.
func TestRangeStream(t *testing.T) {
	_, p, data := serveProxied(t, 300_000)
	opt := testOptions(t)
	o := open(t, opt)
	const off, n = 1234, 3*testBlock + 17
	before := p.BodyBytes()
	r := o.NewRangeReader(off, n)
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != string(data[off:off+n]) {
		t.Fatalf("range stream: %d bytes, %v; want %d", len(got), err, n)
	}
	if g := o.Stats().Gets; g != 1 {
		t.Fatalf("range stream made %d GETs; want 1", g)
	}
	if sent := p.BodyBytes() - before; sent != n {
		t.Fatalf("the store sent %d bytes for a range of %d", sent, n)
	}
	// A body cut short is resumed from where it stopped, within the range.
	p.FailNext(miniotest.ShortBody, 1)
	r = o.NewRangeReader(off+n, n)
	got, err = io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != string(data[off+n:off+2*n]) {
		t.Fatalf("range stream through a cut body: %d bytes, %v", len(got), err)
	}
	// A range past the end ends at the object's end; an empty one is empty.
	for _, c := range []struct{ off, n, want int64 }{{int64(len(data)) - 10, 100, 10}, {5, 0, 0}} {
		r = o.NewRangeReader(c.off, c.n)
		got, err = io.ReadAll(r)
		r.Close()
		if err != nil || int64(len(got)) != c.want {
			t.Errorf("NewRangeReader(%d, %d): %d bytes, %v; want %d", c.off, c.n, len(got), err, c.want)
		}
	}
	// The blocks the first range passed whole are cached: another Object
	// reads them without a request.
	o.Close()
	o2 := open(t, opt)
	readRange(t, o2, data, testBlock, 2*testBlock)
	if g := o2.Stats().Gets; g != 0 {
		t.Fatalf("reading what the range stream passed made %d GETs; want 0", g)
	}
}
