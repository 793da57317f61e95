package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/internal/objstore"
)

// readerCache keeps indexed corpus files (CTF or Parquet) for reuse by later calls with the
// same reader settings (invariant 3): indexing a large file is a full pass,
// restoring a position on an indexed one is cheap. Calls asking for a file
// that is being indexed wait for that pass rather than start another; the
// pass runs under a context of its own, cancelled when every call waiting
// for it has gone (invariant 4). Entries in use are never closed; idle ones
// beyond the bound are closed oldest first.
type readerCache struct {
	mu      sync.Mutex
	max     int
	tick    uint64
	entries map[string]*readerEntry
	closed  bool
	passes  int // index passes running
	started int // index passes started (tests)
	// progress, when set, hears of each block an index pass reads (tests).
	progress func(n int64)
	// indexDir keeps local CTF files' indexes (Options.CacheIndex); empty:
	// none.
	indexDir string
}

// readerEntry is an indexed file, or one being indexed (pending).
type readerEntry struct {
	key     string
	name    string      // the file's absolute path or the object's URL
	version string      // blob.version of what was indexed
	info    fs.FileInfo // a local file indexed (os.SameFile tells a replaced one); nil for an object
	// exactable is the object read, whose reads a call split by chunks
	// turns exact (objstore.Options.Exact); nil for a local file.
	exactable *objstore.Object
	// While pending, waiters counts the calls waiting for the pass and
	// cancel stops it; done is closed when it ends, with r or err set.
	pending bool
	waiters int
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	// Once indexed, refs counts the calls using r.
	r        file.Reader
	refs     int
	lastUsed uint64
}

// errStopping answers calls waiting for an index pass when the server stops.
var errStopping = errors.New("the server is stopping")

func newReaderCache(max int) *readerCache {
	return &readerCache{max: max, entries: map[string]*readerEntry{}}
}

// blob is a corpus a call opened and checked: a local file or an object.
type blob struct {
	corpus.Blob
	name string // the file's absolute path, or the object's URL
	// version tells the content apart: a file's size and modification
	// time, an object's ETag and size (os.SameFile has no meaning for an
	// object: another version is another ETag).
	version string
	info    fs.FileInfo // a local file's; nil for an object
	exact   bool        // the call reads an object's chunks far apart (objstore.Options.Exact)
}

// fileBlob is the blob of the local file f at the absolute path abs.
func fileBlob(f *os.File, abs string, info fs.FileInfo) blob {
	return blob{Blob: f, name: abs, info: info, version: fmt.Sprintf("file\x00%d\x00%d", info.Size(), info.ModTime().UnixNano())}
}

// objectBlob is the blob of an object opened from url.
func objectBlob(o *objstore.Object, url string) blob {
	return blob{Blob: o, name: url, version: fmt.Sprintf("object\x00%s\x00%d", o.ETag(), o.Size())}
}

// acquire returns the reader of b for cfg, and a release function. It
// takes b over: the file indexed is b itself, never what its name names
// later (invariant 10). When no reader of that file (or that version of
// the object) matches, it starts an index pass, or waits for the one
// another call started; when ctx ends first it returns ctx's error, and
// the pass stops once no call waits for it. A new version of an object
// puts the readers of its older versions out of the cache.
func (c *readerCache) acquire(ctx context.Context, b blob, cfg ctf.Config) (file.Reader, func(), error) {
	// The budget is each call's own (ctf.Session), so calls with different
	// max_errors share the index; the Reader's own budget is never spent.
	cfg.MaxErrors = math.MaxInt
	key := fmt.Sprintf("%s\x00%s\x00%v|%s|%s|%d|%d|%v|%v", b.name, b.version,
		cfg.Streams, cfg.DefinesMBSize, cfg.Label, cfg.ChunkBytes, cfg.ChunkSequences, cfg.LineMode, cfg.CacheIndex)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		b.Close()
		return nil, nil, errStopping
	}
	e, ok := c.entries[key]
	if ok && e.info != nil && b.info != nil && !os.SameFile(e.info, b.info) {
		c.detachLocked(e) // another file under the same name, size and time
		ok = false
	}
	if b.info == nil {
		c.detachVersionsLocked(b)
	}
	if ok && !e.pending {
		e.refs++
		c.tick++
		e.lastUsed = c.tick
		c.exactLocked(e, b)
		c.mu.Unlock()
		b.Close()
		return e.r, c.releaser(e), nil
	}
	owned := true
	if !ok {
		pctx, cancel := context.WithCancel(context.Background())
		e = &readerEntry{key: key, name: b.name, version: b.version, info: b.info, pending: true, cancel: cancel, done: make(chan struct{})}
		c.entries[key] = e
		c.passes++
		c.started++
		go c.index(pctx, e, b, cfg, c.progress)
		owned = false // the pass owns it
	}
	e.waiters++
	c.mu.Unlock()
	if owned {
		b.Close() // another call's pass indexes the same file
	}
	select {
	case <-e.done:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.pending {
		// The call leaves before the pass ends: the last to leave stops it.
		if e.waiters--; e.waiters == 0 {
			e.cancel()
			c.detachLocked(e)
		}
		return nil, nil, ctx.Err()
	}
	if e.err != nil {
		return nil, nil, e.err
	}
	// The pass counted this call among the reader's users.
	if ctx.Err() != nil {
		c.releaseLocked(e)
		return nil, nil, ctx.Err()
	}
	c.exactLocked(e, b)
	return e.r, c.releaser(e), nil
}

// exactLocked turns on exact reads of e's object for a call b that wants
// them: a reader shared by calls keeps the first call's Object, and a rank
// split by chunks that finds it open would otherwise fetch whole blocks,
// half of them other ranks' bytes. Once on, it stays on: the other calls
// read the same bytes, fetched in parts.
func (c *readerCache) exactLocked(e *readerEntry, b blob) {
	if b.exact && e.exactable != nil {
		e.exactable.SetExact(true)
	}
}

// index runs one index pass and hands its reader to the calls still
// waiting, or closes it when none is left.
func (c *readerCache) index(ctx context.Context, e *readerEntry, b blob, cfg ctf.Config, progress func(int64)) {
	var r file.Reader
	var err error
	var exactable *objstore.Object
	if o, ok := b.Blob.(*objstore.Object); ok {
		r, err = file.OpenObject(ctx, o, b.name, cfg, file.Options{Progress: progress})
		if err == nil {
			exactable = o
		}
	} else {
		r, err = file.OpenFile(ctx, b.Blob, b.name, cfg, file.Options{Progress: progress, IndexDir: c.indexDir})
	}
	if err != nil {
		b.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.passes--
	e.cancel()
	e.pending = false
	defer close(e.done)
	switch {
	case err == nil && c.closed:
		r.Close()
		err = errStopping
	case err == nil && e.waiters == 0:
		r.Close()
		err = errors.New("no call waits for the index")
	case err != nil && c.closed:
		err = errStopping
	}
	if err != nil {
		e.err = err
		c.detachLocked(e)
		return
	}
	e.r, e.refs, e.waiters, e.exactable = r, e.waiters, 0, exactable
	c.tick++
	e.lastUsed = c.tick
	c.evictLocked()
}

// detachLocked takes e out of the cache, so that later calls do not find
// it; an idle reader of it is closed, one in use is closed by its last
// release.
func (c *readerCache) detachLocked(e *readerEntry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	if !e.pending && e.r != nil && e.refs == 0 {
		e.r.Close()
		e.r = nil
	}
}

// detachVersionsLocked puts out of the cache the readers of other
// versions of the object b: it was replaced, and they will not be asked
// for again.
func (c *readerCache) detachVersionsLocked(b blob) {
	for _, e := range c.entries {
		if e.info == nil && e.name == b.name && e.version != b.version {
			c.detachLocked(e)
		}
	}
}

func (c *readerCache) releaser(e *readerEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.releaseLocked(e)
		})
	}
}

func (c *readerCache) releaseLocked(e *readerEntry) {
	e.refs--
	if c.entries[e.key] != e || c.closed {
		c.detachLocked(e)
		return
	}
	if e.refs == 0 {
		// Idle, the reader keeps its index and nothing more: the buffers
		// and chunks its calls recycled go to the collector.
		if d, ok := e.r.(spareDropper); ok {
			d.DropSpares()
		}
	}
	c.evictLocked()
}

// spareDropper is a reader that keeps memory for reuse between loads
// (ctf.Reader.DropSpares).
type spareDropper interface{ DropSpares() }

// evictLocked closes idle readers, oldest first, while there are more than max.
func (c *readerCache) evictLocked() {
	for len(c.entries) > c.max {
		var old *readerEntry
		for _, e := range c.entries {
			if !e.pending && e.refs == 0 && (old == nil || e.lastUsed < old.lastUsed) {
				old = e
			}
		}
		if old == nil {
			return // every reader is in use or being indexed
		}
		c.detachLocked(old)
	}
}

// closeAll stops the index passes and closes every idle reader (those in
// use close with their last release); the cache refuses calls afterwards.
func (c *readerCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, e := range c.entries {
		if e.pending {
			e.cancel()
		}
		c.detachLocked(e)
	}
}

// open counts the cached readers (for tests).
func (c *readerCache) open() (n, inUse int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.pending {
			continue
		}
		n++
		if e.refs > 0 {
			inUse++
		}
	}
	return n, inUse
}

// running counts the index passes in progress and the calls waiting for
// them (for tests).
func (c *readerCache) running() (passes, waiters int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.pending {
			waiters += e.waiters
		}
	}
	return c.passes, waiters
}

// indexed counts the index passes started (for tests).
func (c *readerCache) indexed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// setProgress sets the progress hook of later passes (for tests).
func (c *readerCache) setProgress(fn func(int64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress = fn
}
