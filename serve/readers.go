package serve

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/batchprep/batchprep/ctf"
)

// readerCache keeps indexed CTF files for reuse by later calls with the
// same reader settings (invariant 3): indexing a large file is a full pass,
// restoring a position on an indexed one is cheap. Entries in use are never
// closed; idle ones beyond the bound are closed oldest first.
type readerCache struct {
	mu      sync.Mutex
	max     int
	tick    uint64
	entries map[string]*readerEntry
}

type readerEntry struct {
	r        *ctf.Reader
	refs     int
	lastUsed uint64
}

func newReaderCache(max int) *readerCache {
	return &readerCache{max: max, entries: map[string]*readerEntry{}}
}

// acquire returns the reader of the file at the absolute path abs, whose
// information is info, for cfg, opening (indexing) it when no idle or
// shared one matches, and a release function.
func (c *readerCache) acquire(abs string, info fs.FileInfo, cfg ctf.Config) (*ctf.Reader, func(), error) {
	// The budget is each call's own (ctf.Session), so calls with different
	// max_errors share the index; the Reader's own budget is never spent.
	cfg.MaxErrors = math.MaxInt
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%v|%s|%s|%d|%d|%v|%v", abs, info.Size(), info.ModTime().UnixNano(),
		cfg.Streams, cfg.DefinesMBSize, cfg.Label, cfg.ChunkBytes, cfg.ChunkSequences, cfg.LineMode, cfg.CacheIndex)
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		e.refs++
		c.tick++
		e.lastUsed = c.tick
		c.mu.Unlock()
		return e.r, c.releaser(e), nil
	}
	c.mu.Unlock()
	// Indexing runs unlocked; two calls racing on one new file may both
	// index it, and the second result is kept alone.
	r, err := ctf.Open(abs, cfg)
	if err != nil {
		return nil, nil, err
	}
	if now, err := os.Stat(abs); err != nil || !os.SameFile(now, info) {
		r.Close()
		return nil, nil, fmt.Errorf("%s was replaced while it was opened; try again", abs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[key]; ok {
		old.refs++
		c.tick++
		old.lastUsed = c.tick
		r.Close()
		return old.r, c.releaser(old), nil
	}
	c.tick++
	e = &readerEntry{r: r, refs: 1, lastUsed: c.tick}
	c.entries[key] = e
	c.evictLocked()
	return r, c.releaser(e), nil
}

func (c *readerCache) releaser(e *readerEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			e.refs--
			c.evictLocked()
		})
	}
}

// evictLocked closes idle readers, oldest first, while there are more than max.
func (c *readerCache) evictLocked() {
	for len(c.entries) > c.max {
		var oldKey string
		var old *readerEntry
		for k, e := range c.entries {
			if e.refs == 0 && (old == nil || e.lastUsed < old.lastUsed) {
				oldKey, old = k, e
			}
		}
		if old == nil {
			return // every reader is in use
		}
		old.r.Close()
		delete(c.entries, oldKey)
	}
}

// closeAll closes every reader; the cache must not be used afterwards.
func (c *readerCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		e.r.Close()
		delete(c.entries, k)
	}
}

// open counts the cached readers (for tests).
func (c *readerCache) open() (n, inUse int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		n++
		if e.refs > 0 {
			inUse++
		}
	}
	return n, inUse
}
