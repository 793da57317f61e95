package objstore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// staleTemp is the age past which an eviction scan removes temporary files
// (of writes by processes that were killed).
const staleTemp = time.Hour

// cache is a directory of block files shared by every Object and process
// that names it (invariants 8 and 9). A file's name is the hex of its key,
// under a folder of the key's first byte; its modification time is its
// last use, which eviction reads.
type cache struct {
	dir   string
	limit int64

	mu        sync.Mutex
	scanned   bool
	total     int64 // bytes at the last scan, plus this cache's writes since
	sinceScan int64 // bytes this cache wrote since its last scan
	writing   int64 // bytes of writes under way (reserved, maybe not on disk)
}

// caches holds one cache per directory and bound, shared by the Objects of
// this process, so that their writes are counted together.
var caches struct {
	mu sync.Mutex
	m  map[string]*cache
}

// openCache returns the process's cache for dir with the given bound.
func openCache(dir string, limit int64) (*cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("objstore: cache-dir: %w", err)
	}
	id := fmt.Sprintf("%s\x00%d", dir, limit)
	caches.mu.Lock()
	defer caches.mu.Unlock()
	if c := caches.m[id]; c != nil {
		return c, nil
	}
	if caches.m == nil {
		caches.m = map[string]*cache{}
	}
	c := newCache(dir, limit)
	caches.m[id] = c
	return c, nil
}

// newCache returns a cache of its own for dir (as another process has).
func newCache(dir string, limit int64) *cache { return &cache{dir: dir, limit: limit} }

func (c *cache) path(key [32]byte) string {
	h := hex.EncodeToString(key[:])
	return filepath.Join(c.dir, h[:2], h+".blk")
}

// get returns the block stored under key, checked against its trailer; a
// bad file is removed (bad reports it) and counts as a miss. A hit marks
// the file as used now.
func (c *cache) get(key [32]byte, n int64) (data []byte, bad bool) {
	p := c.path(key)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	data, err = decodeBlock(b, key, n)
	if err != nil {
		os.Remove(p)
		return nil, true
	}
	now := time.Now()
	os.Chtimes(p, now, now)
	return data, false
}

// readRange copies bytes [lo, hi) of the block stored under key (n bytes
// long) into dst, reading and checking only the trailer and the pieces
// the range covers. ok is false on a miss; bad reports a damaged file,
// which is removed. A hit marks the file as used now (at most once every
// touchEvery, so that a block read piece by piece is not touched per
// read).
func (c *cache) readRange(key [32]byte, n, lo, hi int64, dst []byte) (ok, bad bool) {
	p := c.path(key)
	f, err := os.Open(p)
	if err != nil {
		return false, false
	}
	defer f.Close()
	st, err := f.Stat()
	tl := trailerLen(n)
	if err != nil || st.Size() != n+tl {
		os.Remove(p)
		return false, err == nil
	}
	first, last := lo/pieceLen, (hi-1)/pieceLen
	from, to := first*pieceLen, min(n, (last+1)*pieceLen)
	buf := getScratch(int(to-from) + int(tl))
	defer putScratch(buf)
	data, trailer := buf[:to-from], buf[to-from:]
	if _, err := f.ReadAt(trailer, n); err != nil {
		os.Remove(p)
		return false, true
	}
	table, err := decodeTrailer(trailer, key, n)
	if err == nil {
		if _, err = f.ReadAt(data, from); err == nil {
			err = checkPieces(data, first, table)
		}
	}
	if err != nil {
		os.Remove(p)
		return false, true
	}
	copy(dst, data[lo-from:hi-from])
	if now := time.Now(); now.Sub(st.ModTime()) > touchEvery {
		os.Chtimes(p, now, now)
	}
	return true, false
}

// touchEvery is how stale a cache file's modification time may get before
// a hit renews it (the recency eviction goes by).
const touchEvery = time.Minute

var scratch sync.Pool

func getScratch(n int) []byte {
	if b, ok := scratch.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

func putScratch(b []byte) { scratch.Put(&b) }

// has reports whether a file for key exists (without checking it: get
// does when it is read).
func (c *cache) has(key [32]byte) bool {
	_, err := os.Stat(c.path(key))
	return err == nil
}

// put stores data under key, first evicting least recently used files if
// the write would take the directory past its limit. A failure is not the
// caller's problem: the data were fetched; put only reports it.
func (c *cache) put(key [32]byte, data []byte) error {
	size := int64(len(data)) + trailerLen(int64(len(data)))
	if size > c.limit {
		return nil
	}
	// Room is reserved under the lock, so that concurrent writers of this
	// process never pass the bound together.
	c.mu.Lock()
	if !c.scanned || c.total+size > c.limit || c.sinceScan > c.limit/8 {
		if err := c.evict(size); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.total += size
	c.sinceScan += size
	c.writing += size
	c.mu.Unlock()
	p := c.path(key)
	err := os.MkdirAll(filepath.Dir(p), 0o755)
	if err == nil {
		err = writeBlockFile(p, data, appendTrailer(nil, key, data))
	}
	if errors.Is(err, fs.ErrNotExist) && c.has(key) {
		// Another writer of the same block removed our temporary file as
		// stale (atomicfile does) and renamed its own: the same bytes.
		err = nil
	}
	c.mu.Lock()
	c.writing -= size
	if err != nil {
		c.total -= size
	}
	c.mu.Unlock()
	return err
}

// writeBlockFile writes data and its trailer to a temporary file beside p
// and renames it to p, so that a reader sees the whole file or none. It
// does not fsync: a cache file torn by a crash fails its trailer's check
// when read, and its block is fetched again, so durability would buy
// nothing and cost a disk flush per block. Temporary files of killed
// writes are removed by scan once stale.
func writeBlockFile(p string, data, trailer []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if _, err = f.Write(trailer); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

type cacheEntry struct {
	path  string
	size  int64
	mtime time.Time
}

// evict scans the directory under an exclusive lock (one scan at a time
// across processes) and removes the least recently used files until room
// more bytes fit under the limit, leaving an eighth of the limit free so
// that scans are rare. Files that vanish meanwhile (another process
// evicted them) are skipped. The caller holds c.mu.
func (c *cache) evict(room int64) error {
	unlock, err := lockDir(c.dir)
	if err != nil {
		return err
	}
	defer unlock()
	entries, total := c.scan()
	// Writes under way may not be on disk yet: count them (twice, if their
	// temporary files were seen, which errs on the safe side).
	total += c.writing
	if total+room > c.limit {
		slices.SortFunc(entries, func(a, b cacheEntry) int { return a.mtime.Compare(b.mtime) })
		target := max(c.limit-c.limit/8-room, 0)
		for _, e := range entries {
			if total <= target {
				break
			}
			if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
				total -= e.size
			}
		}
	}
	c.scanned, c.total, c.sinceScan = true, total, 0
	return nil
}

// scan lists the block files and their total size; stale temporary files
// are removed on the way.
func (c *cache) scan() ([]cacheEntry, int64) {
	var entries []cacheEntry
	var total int64
	subs, _ := os.ReadDir(c.dir)
	for _, s := range subs {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		sub := filepath.Join(c.dir, s.Name())
		files, _ := os.ReadDir(sub)
		for _, f := range files {
			fi, err := f.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			p := filepath.Join(sub, f.Name())
			if strings.HasPrefix(f.Name(), ".") {
				if time.Since(fi.ModTime()) > staleTemp {
					os.Remove(p)
				} else {
					total += fi.Size()
				}
				continue
			}
			if strings.HasSuffix(f.Name(), ".blk") {
				entries = append(entries, cacheEntry{p, fi.Size(), fi.ModTime()})
				total += fi.Size()
			}
		}
	}
	return entries, total
}

// lockDir takes the directory's eviction lock (flock on a file in it).
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("objstore: cache lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("objstore: cache lock: %w", err)
	}
	return func() { f.Close() }, nil
}
