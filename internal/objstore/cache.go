package objstore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

func (c *cache) path(key [32]byte) string { return c.named(key, ".blk") }

// segPath is the path of the segment file named by key.
func (c *cache) segPath(key [32]byte) string { return c.named(key, ".seg") }

func (c *cache) named(key [32]byte, ext string) string {
	h := hex.EncodeToString(key[:])
	return filepath.Join(c.dir, h[:2], h+ext)
}

// get returns the block at w, checked against its trailer; a bad file is
// removed (bad reports it) and counts as a miss. A hit marks the file as
// used now.
func (c *cache) get(w where) (data []byte, bad bool) {
	data = make([]byte, w.n)
	if ok, bad := c.read(w, 0, w.n, data, true); !ok {
		return nil, bad
	}
	return data, false
}

// readRange copies bytes [lo, hi) of the block at w into dst, reading and
// checking only the trailer and the pieces the range covers. ok is false
// on a miss; bad reports a damaged file, which is removed. A hit marks the
// file as used now (at most once every touchEvery, so that a block read
// piece by piece is not touched per read).
func (c *cache) readRange(w where, lo, hi int64, dst []byte) (ok, bad bool) {
	return c.read(w, lo, hi, dst, false)
}

// read is readRange, marking a hit as used now when whole is set.
func (c *cache) read(w where, lo, hi int64, dst []byte, whole bool) (ok, bad bool) {
	f, p, base, size, err := c.open(w)
	if err != nil {
		return false, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, false
	}
	if err := checkedRange(f, st.Size(), size, base, w, lo, hi, dst); err != nil {
		os.Remove(p)
		return false, true
	}
	if now := time.Now(); whole || now.Sub(st.ModTime()) > touchEvery {
		os.Chtimes(p, now, now)
	}
	return true, false
}

// checkedRange copies bytes [lo, hi) of the block at w, which starts at
// base in r, a cache file of size bytes that must be want bytes long, into
// dst, reading and checking the block's trailer and only the pieces the
// range covers.
func checkedRange(r io.ReaderAt, size, want, base int64, w where, lo, hi int64, dst []byte) error {
	if size != want {
		return fmt.Errorf("%w: %d bytes, want %d", errBadCacheFile, size, want)
	}
	n, tl := w.n, trailerLen(w.n)
	first, last := lo/pieceLen, (hi-1)/pieceLen
	from, to := first*pieceLen, min(n, (last+1)*pieceLen)
	buf := getScratch(int(to-from) + int(tl))
	defer putScratch(buf)
	data, trailer := buf[:to-from], buf[to-from:]
	if _, err := r.ReadAt(trailer, base+n); err != nil {
		return fmt.Errorf("%w: %v", errBadCacheFile, err)
	}
	table, err := decodeTrailer(trailer, w.key, n)
	if err != nil {
		return err
	}
	if _, err = r.ReadAt(data, base+from); err != nil {
		return fmt.Errorf("%w: %v", errBadCacheFile, err)
	}
	if err := checkPieces(data, first, table); err != nil {
		return err
	}
	copy(dst, data[lo-from:hi-from])
	return nil
}

// open opens the file holding the block at w: its own, else its segment's.
// It returns the file, its path, where the block starts in it and the
// size the file must have.
func (c *cache) open(w where) (f *os.File, p string, base, size int64, err error) {
	p = c.path(w.key)
	f, err = os.Open(p)
	if err == nil || w.segSize == 0 || !errors.Is(err, fs.ErrNotExist) {
		return f, p, 0, w.n + trailerLen(w.n), err
	}
	p = c.segPath(w.seg)
	f, err = os.Open(p)
	return f, p, w.segOff, w.segSize, err
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

// has reports whether a file holds the block at w, its own or its
// segment's (without checking it: get does when it is read).
func (c *cache) has(w where) bool {
	if _, err := os.Stat(c.path(w.key)); err == nil {
		return true
	}
	return w.segSize > 0 && c.hasSegment(w.seg)
}

// hasSegment reports whether the segment file named by seg exists.
func (c *cache) hasSegment(seg [32]byte) bool {
	_, err := os.Stat(c.segPath(seg))
	return err == nil
}

// put stores data under key, first evicting least recently used files if
// the write would take the directory past its limit. A failure is not the
// caller's problem: the data were fetched; put only reports it.
func (c *cache) put(key [32]byte, data []byte) error {
	n := int64(len(data))
	f, err := c.create(c.path(key), n+trailerLen(n))
	if f == nil {
		return err
	}
	f.add(key, data)
	return f.commit()
}

// A cacheFile is a cache file being written, a block and its trailer at a
// time: a temporary file beside its path, renamed to it by commit, so that
// a reader sees the whole file or none. It is not fsynced: a cache file
// torn by a crash fails its trailer's check when read, and its block is
// fetched again, so durability would buy nothing and cost a disk flush per
// file. Temporary files of killed writes are removed by scan once stale.
type cacheFile struct {
	c             *cache
	p             string
	f             *os.File
	size, written int64
	err           error
}

// errUnfinished is why a cache file given up on is not committed.
var errUnfinished = errors.New("objstore: a cache file given up on")

// create starts the cache file at p, of size bytes, first evicting least
// recently used files if it would take the directory past its limit
// (room is reserved under the lock, so that concurrent writers of this
// process never pass the bound together). It returns nil, and no error,
// for a file larger than the limit.
func (c *cache) create(p string, size int64) (*cacheFile, error) {
	if size > c.limit {
		return nil, nil
	}
	c.mu.Lock()
	if !c.scanned || c.total+size > c.limit || c.sinceScan > c.limit/8 {
		if err := c.evict(size); err != nil {
			c.mu.Unlock()
			return nil, err
		}
	}
	c.total += size
	c.sinceScan += size
	c.writing += size
	c.mu.Unlock()
	cf := &cacheFile{c: c, p: p, size: size}
	err := os.MkdirAll(filepath.Dir(p), 0o755)
	if err == nil {
		cf.f, err = os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	}
	if err == nil {
		err = cf.f.Chmod(0o644)
	}
	if err != nil {
		cf.err = err
		cf.commit()
		return nil, err
	}
	return cf, nil
}

// add appends data, a block stored under key, and its trailer.
func (cf *cacheFile) add(key [32]byte, data []byte) {
	for _, b := range [][]byte{data, appendTrailer(nil, key, data)} {
		if cf.err != nil {
			return
		}
		_, cf.err = cf.f.Write(b)
		cf.written += int64(len(b))
	}
}

// abort gives the file up: commit removes it.
func (cf *cacheFile) abort() {
	if cf.err == nil {
		cf.err = errUnfinished
	}
	cf.commit()
}

// commit renames the file into place when every byte of it was written,
// else removes it, and settles the room reserved.
func (cf *cacheFile) commit() error {
	err := cf.err
	if err == nil && cf.written != cf.size {
		err = fmt.Errorf("objstore: cache file %s: %d bytes written of %d", cf.p, cf.written, cf.size)
	}
	if cf.f != nil {
		if e := cf.f.Close(); err == nil {
			err = e
		}
		if err == nil {
			err = os.Rename(cf.f.Name(), cf.p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			if _, e := os.Stat(cf.p); e == nil {
				// Another writer of the same file removed our temporary
				// file as stale and renamed its own: the same bytes.
				err = nil
			}
		}
		if err != nil {
			os.Remove(cf.f.Name())
		}
	}
	c := cf.c
	c.mu.Lock()
	c.writing -= cf.size
	if err != nil {
		c.total -= cf.size
	}
	c.mu.Unlock()
	if err == errUnfinished {
		return nil
	}
	return err
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
			if strings.HasSuffix(f.Name(), ".blk") || strings.HasSuffix(f.Name(), ".seg") {
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
