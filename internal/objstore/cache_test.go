package objstore

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// dirBytes is the total size of the regular files under dir, the lock
// file aside.
func dirBytes(t *testing.T, dir string) (total int64, files int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
			files++
		}
		return nil
	})
	return total, files
}

func key(i int) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "block %d", i)) }

// TestCacheBound: invariant 9. After every write the directory holds at
// most the bound, and the most recently used blocks are the ones kept.
func TestCacheBound(t *testing.T) {
	dir := t.TempDir()
	block := make([]byte, 1000)
	limit := int64(10 * (len(block) + int(trailerLen(int64(len(block))))))
	c := newCache(dir, limit)
	for i := range 100 {
		if err := c.put(key(i), block); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct modification times
		if data, _ := c.get(where{key: key(0), n: int64(len(block))}); data == nil {
			t.Fatalf("block 0, used after every write, was evicted at write %d", i)
		}
		if total, _ := dirBytes(t, dir); total > limit {
			t.Fatalf("after write %d the cache holds %d bytes; bound %d", i, total, limit)
		}
	}
	if data, _ := c.get(where{key: key(99), n: int64(len(block))}); data == nil {
		t.Fatal("the last block written is gone")
	}
	if data, _ := c.get(where{key: key(50), n: int64(len(block))}); data != nil {
		t.Fatal("an old unused block survived")
	}
}

// TestCacheSharedEviction: invariant 9. Several caches on one directory
// (as several processes have) write and evict at once; every read is
// either a miss or the right bytes, and the bound holds up to each
// writer's unscanned eighth.
func TestCacheSharedEviction(t *testing.T) {
	dir := t.TempDir()
	limit := int64(40 * (500 + trailerLen(500)))
	var wg sync.WaitGroup
	for w := range 4 {
		c := newCache(dir, limit)
		wg.Go(func() {
			for i := range 200 {
				k := (i*7 + w) % 120
				want := []byte(strings.Repeat(fmt.Sprint(k%10), 500))
				if data, _ := c.get(where{key: key(k), n: 500}); data != nil && string(data) != string(want) {
					t.Errorf("block %d: wrong bytes", k)
					return
				}
				if err := c.put(key(k), want); err != nil {
					t.Errorf("put: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if total, _ := dirBytes(t, dir); total > limit+4*limit/8 {
		t.Fatalf("cache holds %d bytes; bound %d", total, limit)
	}
}

// TestCorruptCacheFile: invariant 8. A damaged block file is noticed,
// removed, fetched again (one GET), and replaced by a good one.
func TestCorruptCacheFile(t *testing.T) {
	_, data := serve(t, 50_000)
	opt := testOptions(t)
	o := open(t, opt)
	readRange(t, o, data, 10_000, testBlock)
	o.Close()
	files := cacheFiles(opt.CacheDir)
	if len(files) != 2 {
		t.Fatalf("%d block files; want 2", len(files))
	}
	b, _ := os.ReadFile(files[0])
	b[100] ^= 0x40
	os.WriteFile(files[0], b, 0o644)
	os.Truncate(files[1], 50)

	o2 := open(t, opt)
	readRange(t, o2, data, 10_000, testBlock)
	if st := o2.Stats(); st.CacheBad != 2 || st.Gets != 1 {
		t.Fatalf("stats %+v; want 2 bad files and 1 GET", st)
	}
	o2.Close()
	o3 := open(t, opt)
	readRange(t, o3, data, 10_000, testBlock)
	if st := o3.Stats(); st.CacheBad != 0 || st.Gets != 0 {
		t.Fatalf("after repair: %+v; want all from cache", st)
	}
}

// TestObjectCacheBound: invariant 9 through an Object: many ranges read
// with a small bound leave at most the bound on disk, and the bytes stay
// right.
func TestObjectCacheBound(t *testing.T) {
	_, data := serve(t, 300_000)
	opt := testOptions(t)
	opt.CacheBytes = 20 * (testBlock + trailerLen(testBlock))
	o := open(t, opt)
	for off := int64(0); off+3*testBlock <= int64(len(data)); off += 5000 {
		readRange(t, o, data, off, 3*testBlock)
	}
	o.Close()
	if total, files := dirBytes(t, opt.CacheDir); total > opt.CacheBytes || files == 0 {
		t.Fatalf("cache holds %d bytes in %d files; bound %d", total, files, opt.CacheBytes)
	}
}

// cacheFiles lists the cache files (blocks and parts of blocks) under dir.
func cacheFiles(dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".blk") {
			files = append(files, p)
		}
		return nil
	})
	return files
}
