package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// prefetchSpan is the most one prefetch GET asks for: a longer Prefetch is
// split into GETs of this size, which run concurrently.
const prefetchSpan = 16 << 20

// maxPendingWrites bounds the cache files being written in the background
// per Object (each holds its block in memory until written).
const maxPendingWrites = 16

// Object is an object in S3, read at the version (ETag) seen by Open. Its
// methods are safe for concurrent use.
type Object struct {
	url, bucket, key string
	etag             string
	size             int64
	opt              Options
	c                *client
	cache            *cache
	jit              *jitter

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	sem    chan struct{} // one slot per ranged GET in flight (invariant 7)
	writes chan struct{} // one slot per background cache write
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	inflight map[int64]*pending  // by block index: fetched, or being written to the cache
	extents  map[int64][]*extent // by block index: parts fetched alone (exact reads)
	exact    atomic.Bool         // Options.Exact, or as SetExact changed it

	stats    counters
	lastWarn atomic.Int64 // when Options.Warn was last told of a retry (Unix ns)
	recent   recentPieces // pieces read from the cache, for small reads
}

// pending is a block on its way: being fetched (done open), or fetched and
// being written to the cache (done closed, data set).
type pending struct {
	done chan struct{}
	data []byte
	err  error
}

// Stats counts an Object's work.
type Stats struct {
	Gets           int64 // GET requests sent, retries included
	BytesFetched   int64 // body bytes received
	BytesFromCache int64 // block bytes read from cache files
	Retries        int64 // attempts repeated after a transient error
	CacheBad       int64 // cache files found damaged (removed and fetched again)
}

type counters struct {
	gets, fetched, fromCache, retries, bad atomic.Int64
}

// Open looks the object up (a HEAD request) and returns it; reads then
// serve that version only (invariants 2 and 3). ctx bounds the HEAD; the
// Object lives until Close.
func Open(ctx context.Context, url string, opt Options) (*Object, error) {
	bucket, key, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if opt, err = opt.withDefaults(); err != nil {
		return nil, err
	}
	c, err := sharedClient(ctx, opt)
	if err != nil {
		return nil, err
	}
	ch, err := openCache(opt.CacheDir, opt.CacheBytes)
	if err != nil {
		return nil, err
	}
	o := &Object{
		url: url, bucket: bucket, key: key, opt: opt, c: c, cache: ch, jit: newJitter(),
		sem:      make(chan struct{}, opt.FetchConcurrency),
		writes:   make(chan struct{}, maxPendingWrites),
		inflight: map[int64]*pending{}, extents: map[int64][]*extent{},
	}
	o.exact.Store(opt.Exact)
	o.ctx, o.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := o.head(ctx); err != nil {
		o.cancel()
		return nil, err
	}
	return o, nil
}

// head reads the object's size and ETag. A missing object is told apart
// from a missing bucket.
func (o *Object) head(ctx context.Context) error {
	var out *s3.HeadObjectOutput
	err := o.retry(ctx, "open", func(ctx context.Context) error {
		var err error
		out, err = o.c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &o.bucket, Key: &o.key})
		return err
	})
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrNotFound {
		_, berr := o.c.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &o.bucket})
		if classify(berr) == notFound {
			e.Msg = fmt.Sprintf("no such bucket %q (credentials: %s)", o.bucket, o.c.source)
		} else if berr == nil {
			e.Msg = fmt.Sprintf("no such key %q in bucket %q (credentials: %s)", o.key, o.bucket, o.c.source)
		}
	}
	if err != nil {
		return err
	}
	o.size, o.etag = aws.ToInt64(out.ContentLength), aws.ToString(out.ETag)
	if o.etag == "" {
		return &Error{URL: o.url, Op: "open", Msg: "the server sent no ETag, so reads cannot be pinned to one version"}
	}
	return nil
}

// URL is the object's s3:// URL.
func (o *Object) URL() string { return o.url }

// Size is the object's length in bytes, as seen at open.
func (o *Object) Size() int64 { return o.size }

// ETag is the object's ETag (with its quotes) as seen at open.
func (o *Object) ETag() string { return o.etag }

// Stats returns the counts so far.
func (o *Object) Stats() Stats {
	return Stats{
		Gets: o.stats.gets.Load(), BytesFetched: o.stats.fetched.Load(), BytesFromCache: o.stats.fromCache.Load(),
		Retries: o.stats.retries.Load(), CacheBad: o.stats.bad.Load(),
	}
}

// Close stops prefetches, waits for cache writes under way and releases
// the Object. Reads after Close fail.
func (o *Object) Close() error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
	o.wg.Wait()
	return nil
}

// enter counts a call in o.wg (so that Close waits for it and for the
// goroutines it starts), or reports that the Object is closed.
func (o *Object) enter() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.wg.Add(1)
	return true
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt says: fewer only at the
// end of the object, with io.EOF. Blocks not in the cache (nor on their way
// from an earlier Prefetch or read) are fetched with one GET (invariant 6).
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &Error{URL: o.url, Op: "read", Msg: fmt.Sprintf("negative offset %d", off)}
	}
	if !o.enter() {
		return 0, &Error{URL: o.url, Op: "read", Msg: "the object is closed"}
	}
	defer o.wg.Done()
	if off >= o.size || len(p) == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if o.exact.Load() {
		return o.readExact(p, off)
	}
	end := min(off+int64(len(p)), o.size)
	bs := o.opt.blockSize
	// Each block's part of the range: from a fetch under way or done, else
	// from its cache file (only the pieces the part covers), else fetched.
	var missing []int64
	small := end-off < pieceLen
	for idx := off / bs; idx <= (end-1)/bs; idx++ {
		lo, hi := max(off, idx*bs), min(end, idx*bs+bs)
		if !o.readCached(idx, lo-idx*bs, hi-idx*bs, p[lo-off:hi-off], small) {
			missing = append(missing, idx)
		}
	}
	if len(missing) > 0 {
		blocks, err := o.blocks(missing)
		if err != nil {
			return 0, err
		}
		for i, idx := range missing {
			lo, hi := max(off, idx*bs), min(end, idx*bs+bs)
			copy(p[lo-off:hi-off], blocks[i][lo-idx*bs:hi-idx*bs])
		}
	}
	if n := int(end - off); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

// readCached copies bytes [lo, hi) of block idx into dst when the block is
// at hand: fetched (or being written to the cache) by this Object, or in a
// cache file. small tells that the whole read (not only this block's part
// of it) is smaller than a piece. It reports whether it did.
func (o *Object) readCached(idx, lo, hi int64, dst []byte, small bool) bool {
	o.mu.Lock()
	pd := o.inflight[idx]
	o.mu.Unlock()
	if pd != nil {
		select {
		case <-pd.done:
			if pd.err == nil {
				copy(dst, pd.data[lo:hi])
				return true
			}
		default:
		}
		return false
	}
	if small {
		// A small read (a Parquet page, a footer): the pieces it covers
		// are read from the block's file and kept, since the next small
		// reads are most likely in them too. The short end of a large read
		// that crosses into a block is not one: the next read is seldom
		// there (a chunk read in a random order).
		p0, p1 := lo/pieceLen, (hi-1)/pieceLen // the pieces covered
		pieces := make([][]byte, p1-p0+1)
		missing := false
		for p := p0; p <= p1; p++ {
			pieces[p-p0] = o.recent.get(o.pieceKey(idx, p))
			missing = missing || pieces[p-p0] == nil
		}
		if missing { // read them all, in one read of the file
			from, to := p0*pieceLen, min((p1+1)*pieceLen, o.blockLen(idx))
			data := make([]byte, to-from)
			ok, bad := o.cache.readRange(o.where(idx), from, to, data)
			if bad {
				o.stats.bad.Add(1)
			}
			if !ok {
				return false
			}
			o.stats.fromCache.Add(to - from)
			for p := p0; p <= p1; p++ {
				pieces[p-p0] = data[(p-p0)*pieceLen : min((p-p0+1)*pieceLen, to-from)]
				o.recent.put(o.pieceKey(idx, p), pieces[p-p0])
			}
		}
		at := p0 * pieceLen
		for _, piece := range pieces {
			a, b := max(lo, at), min(hi, at+int64(len(piece)))
			copy(dst[a-lo:b-lo], piece[a-at:b-at])
			at += pieceLen
		}
		return true
	}
	ok, bad := o.cache.readRange(o.where(idx), lo, hi, dst)
	if bad {
		o.stats.bad.Add(1)
	}
	if ok {
		o.stats.fromCache.Add(hi - lo)
	}
	return ok
}

// Prefetch asks for bytes [off, off+n) to be brought into the cache in the
// background, with the Object's bound on GETs in flight (invariant 7). It
// returns at once; errors surface when the bytes are read.
func (o *Object) Prefetch(off, n int64) {
	off, end := max(off, 0), min(off+n, o.size)
	if off >= end || !o.enter() {
		return
	}
	defer o.wg.Done()
	if o.exact.Load() {
		o.prefetchExact(off, end)
		return
	}
	bs := o.opt.blockSize
	step := max(prefetchSpan/bs, 1)
	for lo := off / bs; lo <= (end-1)/bs; lo += step {
		hi := min(lo+step-1, (end-1)/bs)
		owned := o.claim(lo, hi)
		if len(owned) == 0 {
			continue
		}
		o.wg.Go(func() { o.fetchBlocks(o.ctx, owned) })
	}
}

// blocks returns the blocks idx (ascending), each from a fetch under way,
// the cache, or fetched now with one GET for all those no one fetches.
func (o *Object) blocks(idx []int64) ([][]byte, error) {
	out := make([][]byte, len(idx))
	owned := o.claimList(idx)
	ready := o.takeCached(owned)
	if len(owned) > 0 {
		o.fetchBlocks(o.ctx, owned)
	}
	for i, b := range idx {
		pd := owned[b]
		if pd == nil {
			pd = ready[b]
		}
		if pd == nil {
			o.mu.Lock()
			pd = o.inflight[b]
			o.mu.Unlock()
		}
		if pd == nil { // another fetch of it ended meanwhile: look again
			if data := o.cached(b); data != nil {
				out[i] = data
				continue
			}
			got, err := o.blocks([]int64{b})
			if err != nil {
				return nil, err
			}
			out[i] = got[0]
			continue
		}
		select {
		case <-pd.done:
		case <-o.ctx.Done():
			return nil, &Error{URL: o.url, Op: "read", Msg: "the object was closed"}
		}
		if pd.err != nil {
			return nil, pd.err
		}
		out[i] = pd.data
	}
	return out, nil
}

// takeCached moves out of owned, and returns done, the blocks just claimed
// that are in the cache after all: a fetch of them may have ended, written
// its block and left inflight between the caller's look and its claim.
// Without this look after the claim, such a block would be fetched twice.
func (o *Object) takeCached(owned map[int64]*pending) map[int64]*pending {
	var ready map[int64]*pending
	for i, pd := range owned {
		data := o.fromFile(i)
		if data == nil {
			continue
		}
		pd.data = data
		close(pd.done)
		delete(owned, i)
		o.mu.Lock()
		delete(o.inflight, i)
		o.mu.Unlock()
		if ready == nil {
			ready = map[int64]*pending{}
		}
		ready[i] = pd
	}
	return ready
}

// cached returns block idx if it is already fetched or in the cache.
func (o *Object) cached(idx int64) []byte {
	o.mu.Lock()
	pd := o.inflight[idx]
	o.mu.Unlock()
	if pd != nil {
		select {
		case <-pd.done:
			if pd.err == nil {
				return pd.data
			}
		default:
		}
		return nil
	}
	return o.fromFile(idx)
}

// fromFile returns block idx from its cache file, or nil, counting it.
func (o *Object) fromFile(idx int64) []byte {
	data, bad := o.cache.get(o.where(idx))
	if bad {
		o.stats.bad.Add(1)
	}
	if data != nil {
		o.stats.fromCache.Add(int64(len(data)))
	}
	return data
}

// claim registers the blocks lo..hi that are neither on their way nor in
// the cache as fetched by the caller, and returns them. The cache is looked
// at before the claim (cheaply, for most blocks) and after it, for a fetch
// that ended in between.
func (o *Object) claim(lo, hi int64) map[int64]*pending {
	var idx []int64
	for i := lo; i <= hi; i++ {
		if !o.cache.has(o.where(i)) {
			idx = append(idx, i)
		}
	}
	owned := o.claimList(idx)
	o.takeCached(owned)
	return owned
}

func (o *Object) claimList(idx []int64) map[int64]*pending {
	owned := map[int64]*pending{}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, i := range idx {
		if o.inflight[i] == nil {
			pd := &pending{done: make(chan struct{})}
			o.inflight[i] = pd
			owned[i] = pd
		}
	}
	return owned
}

// fetchBlocks GETs the span from the lowest to the highest owned block in
// one request, hands each owned block to its waiters and writes it to the
// cache in the background (storeFetched).
func (o *Object) fetchBlocks(ctx context.Context, owned map[int64]*pending) {
	lo, hi := int64(-1), int64(-1)
	for i := range owned {
		if lo < 0 || i < lo {
			lo = i
		}
		hi = max(hi, i)
	}
	bs := o.opt.blockSize
	var data []byte
	var err error
	select {
	case o.sem <- struct{}{}:
		data, err = o.fetch(ctx, lo*bs, hi*bs+o.blockLen(hi)-lo*bs)
		<-o.sem
	case <-ctx.Done():
		err = &Error{URL: o.url, Op: "prefetch", Msg: "the object was closed"}
	}
	for i, pd := range owned {
		if err != nil {
			pd.err = err
		} else {
			pd.data = data[(i-lo)*bs : (i-lo)*bs+o.blockLen(i)]
		}
		close(pd.done)
	}
	if err != nil {
		o.mu.Lock()
		for i := range owned {
			delete(o.inflight, i)
		}
		o.mu.Unlock()
		return
	}
	o.storeFetched(owned)
}

// storeBlock writes block idx (data, which it takes) to the cache in the
// background, unless a fetch or write of it is under way; it waits for a
// write slot, so a stream goes no faster than the cache is written. The
// write is counted in written.
func (o *Object) storeBlock(idx int64, data []byte, written *sync.WaitGroup) {
	select {
	case o.writes <- struct{}{}:
	case <-o.ctx.Done():
		return
	}
	o.mu.Lock()
	if o.inflight[idx] != nil || o.closed {
		o.mu.Unlock()
		<-o.writes
		return
	}
	pd := &pending{done: make(chan struct{}), data: data}
	close(pd.done)
	o.inflight[idx] = pd
	o.wg.Add(1) // under mu: Close, which sets closed under mu, waits for it
	o.mu.Unlock()
	written.Add(1)
	go func() {
		defer o.wg.Done()
		defer written.Done()
		if !o.cache.has(o.where(idx)) {
			o.cache.put(o.blockKey(idx), data)
		}
		<-o.writes
		o.mu.Lock()
		delete(o.inflight, idx)
		o.mu.Unlock()
	}()
}

// blockLen is the length of block idx (the last one may be short).
func (o *Object) blockLen(idx int64) int64 {
	return min(o.opt.blockSize, o.size-idx*o.opt.blockSize)
}

// blockKey names block idx of this version of the object in the cache.
func (o *Object) blockKey(idx int64) [32]byte {
	return o.rangeKey(idx*o.opt.blockSize, o.blockLen(idx))
}
