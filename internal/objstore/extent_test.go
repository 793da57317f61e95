package objstore

import (
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
)

func exactOptions(t *testing.T) Options {
	opt := testOptions(t)
	opt.Exact = true
	return opt
}

// TestExactFetchesWhatIsRead: invariant 12. Ranges far apart, each
// starting and ending inside a block (as a rank's own chunks do), cost one
// GET each and fetch their own bytes only; read again from another Object
// on the same cache, or a range inside one of them, they cost no GET. The
// same reads without Exact fetch whole blocks.
func TestExactFetchesWhatIsRead(t *testing.T) {
	_, data := serve(t, 200_000)
	var ranges [][2]int64
	var want int64
	for off := int64(1000); off+2*testBlock < int64(len(data)); off += 4 * 5000 {
		ranges = append(ranges, [2]int64{off, 5000})
		want += 5000
	}
	opt := exactOptions(t)
	o := open(t, opt)
	for _, r := range ranges {
		readRange(t, o, data, r[0], r[1])
	}
	if st := o.Stats(); st.BytesFetched != want || st.Gets != int64(len(ranges)) {
		t.Fatalf("%d ranges of %d bytes: %+v; want %d GETs of %d bytes in all", len(ranges), want, st, len(ranges), want)
	}
	readRange(t, o, data, ranges[2][0]+100, 3000) // inside an extent
	if g := o.Stats().Gets; g != int64(len(ranges)) {
		t.Fatalf("a read inside a fetched range made a GET (%d)", g)
	}
	o.Close()
	o2 := open(t, opt)
	for _, r := range ranges {
		readRange(t, o2, data, r[0], r[1])
	}
	readRange(t, o2, data, ranges[3][0]+4999, 1)
	if st := o2.Stats(); st.Gets != 0 || st.BytesFromCache != want+1 {
		t.Fatalf("the same ranges again: %+v; want no GET and %d bytes from the cache", st, want+1)
	}

	blocks := open(t, testOptions(t))
	for _, r := range ranges {
		readRange(t, blocks, data, r[0], r[1])
	}
	if st := blocks.Stats(); st.BytesFetched < 3*want/2 {
		t.Fatalf("without Exact: %d bytes fetched for %d read; whole blocks expected", st.BytesFetched, want)
	}
}

// TestExactWholeBlocksAreBlocks: a range over several blocks caches its
// whole blocks as blocks, which a reader without Exact then finds, and
// only its edges as parts of their own.
func TestExactWholeBlocksAreBlocks(t *testing.T) {
	_, data := serve(t, 100_000)
	opt := exactOptions(t)
	o := open(t, opt)
	readRange(t, o, data, testBlock+10, 3*testBlock)
	if st := o.Stats(); st.Gets != 1 || st.BytesFetched != 3*testBlock {
		t.Fatalf("%+v; want one GET of %d bytes", st, 3*testBlock)
	}
	o.Close()
	plain := testOptions(t)
	plain.CacheDir = opt.CacheDir
	b := open(t, plain)
	readRange(t, b, data, 2*testBlock, 2*testBlock) // blocks 2 and 3: whole in the exact read
	if st := b.Stats(); st.Gets != 0 {
		t.Fatalf("whole blocks of an exact read not found as blocks: %+v", st)
	}
}

// TestExactRandomRanges: invariant 2 with Exact, as a property: random
// ranges read and prefetched concurrently by several goroutines give the
// object's bytes, and so do they from a second Object on the same cache.
func TestExactRandomRanges(t *testing.T) {
	_, data := serve(t, 200_000)
	opt := exactOptions(t)
	for pass := range 2 {
		o := open(t, opt)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), uint64(pass)))
				for range 60 {
					off := r.Int64N(int64(len(data)) + 10)
					n := 1 + r.Int64N(3*testBlock)
					if r.IntN(3) == 0 {
						o.Prefetch(off, n)
						continue
					}
					p := make([]byte, n)
					k, err := o.ReadAt(p, off)
					want := data[min(off, int64(len(data))):min(off+n, int64(len(data)))]
					if string(p[:k]) != string(want) || (k < int(n)) != (err == io.EOF) || (err != nil && err != io.EOF) {
						t.Errorf("pass %d: ReadAt(%d bytes at %d) = %d, %v, or wrong bytes", pass, n, off, k, err)
						return
					}
				}
			})
		}
		wg.Wait()
		o.Close()
	}
}

// TestExactPrefetchThenRead: invariant 6 with Exact. Reads after a
// Prefetch of their range cost no GET beyond the prefetch's.
func TestExactPrefetchThenRead(t *testing.T) {
	_, p, data := serveProxied(t, 200_000)
	o := open(t, exactOptions(t))
	p.SetDelay(20e6)
	var n int64
	for off := int64(500); off+6000 < int64(len(data)); off += 18_000 {
		o.Prefetch(off, 6000)
		n++
	}
	for off := int64(500); off+6000 < int64(len(data)); off += 18_000 {
		readRange(t, o, data, off, 6000)
	}
	if g := o.Stats().Gets; g != n {
		t.Fatalf("%d ranges prefetched and read with %d GETs; want one each", n, g)
	}
}

// TestExactBadFile: invariant 8 for a part cached alone: a damaged file
// is counted, removed and fetched again.
func TestExactBadFile(t *testing.T) {
	_, data := serve(t, 50_000)
	opt := exactOptions(t)
	o := open(t, opt)
	readRange(t, o, data, 100, 1000)
	o.Close()
	files := cacheFiles(opt.CacheDir)
	if len(files) != 1 {
		t.Fatalf("%d cache files; want 1", len(files))
	}
	b, _ := os.ReadFile(files[0])
	b[10] ^= 1
	os.WriteFile(files[0], b, 0o644)
	o2 := open(t, opt)
	readRange(t, o2, data, 100, 1000)
	if st := o2.Stats(); st.CacheBad != 1 || st.Gets != 1 {
		t.Fatalf("%+v; want the bad file counted and one GET", st)
	}
}
