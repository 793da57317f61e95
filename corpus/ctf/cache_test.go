package ctf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

func openCached(t *testing.T, path string, cfg Config) (*Reader, []Error) {
	t.Helper()
	var warns []Error
	cfg.CacheIndex = true
	cfg.Warn = func(e Error) { warns = append(warns, e) }
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() }) // a mapped index is read until Close
	return r, warns
}

// Invariant 9.
func TestIndexCache(t *testing.T) {
	path := writeTemp(t, "1 |a 1 |b 1\n1 |a 2\n2 |a 3 |b 3\n3 |a 4\n")
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "b", MaxErrors: 1, ChunkSequences: 1}
	r1, w := openCached(t, path, cfg)
	if r1.Summary().FromCache || len(w) != 1 {
		t.Fatalf("first open: from cache %v, warnings %v", r1.Summary().FromCache, w)
	}
	if _, err := os.Stat(path + ".batchprep-index"); err != nil {
		t.Fatal(err)
	}
	r2, w := openCached(t, path, cfg)
	if !r2.Summary().FromCache || !sameIndex(r1.x, r2.x) || len(w) != 1 || r2.Summary().BadSequences != 1 {
		t.Fatalf("second open: from cache %v, index equal %v, warnings %v", r2.Summary().FromCache, sameIndex(r1.x, r2.x), w)
	}
	// A config change that affects the index makes the cache stale.
	cfg2 := cfg
	cfg2.DefinesMBSize = ""
	r3, w := openCached(t, path, cfg2)
	if r3.Summary().FromCache || len(w) != 1 || !errors.Is(w[0].Err, ErrCache) {
		t.Errorf("config change: from cache %v, warnings %v", r3.Summary().FromCache, w)
	}
	// The warning is about the cache file, which has no line to name.
	if len(w) == 1 {
		if got, want := w[0].Error(), "ctf: "+path+".batchprep-index: "; !strings.HasPrefix(got, want) {
			t.Errorf("the cache warning reads %q, want it to start %q", got, want)
		}
	}
	// Same size, different content: the hash catches it.
	if err := os.WriteFile(path, []byte("1 |a 1 |b 1\n1 |a 2\n2 |a 3 |b 3\n4 |a 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r4, _ := openCached(t, path, cfg)
	if r4.Summary().FromCache {
		t.Error("changed data reused the cache")
	}
	// Corruption: ignored with a warning, rebuilt.
	cp := path + ".batchprep-index"
	data, _ := os.ReadFile(cp)
	data[len(data)/2] ^= 0xFF
	os.WriteFile(cp, data, 0o644)
	r5, w := openCached(t, path, cfg)
	if r5.Summary().FromCache || len(w) < 1 || !errors.Is(w[0].Err, ErrCache) {
		t.Errorf("corrupt cache: from cache %v, warnings %v", r5.Summary().FromCache, w)
	}
	if r6, _ := openCached(t, path, cfg); !r6.Summary().FromCache {
		t.Error("cache not rewritten after corruption")
	}
	// CacheDir.
	dir := t.TempDir()
	cfg.CacheDir = dir
	openCached(t, path, cfg)
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(path)+".batchprep-index")); err != nil {
		t.Error(err)
	}
}

// The decoder rejects every truncation of a valid cache.
func TestDecodeIndexTruncated(t *testing.T) {
	x, err := buildIndexString("1 |a 1\n2 |a 2\n2 |a 3\n", Config{Streams: []corpus.Stream{dense("a", 1)}, Label: "a", DefinesMBSize: ""})
	if err != nil {
		t.Fatal(err)
	}
	enc := encodeIndex(cacheKey{size: x.size}, x)
	if _, y, err := decodeIndex(enc); err != nil || !sameIndex(x, y) {
		t.Fatalf("round trip: %v", err)
	}
	for n := 0; n < len(enc); n++ {
		if _, _, err := decodeIndex(enc[:n]); err == nil {
			t.Fatalf("truncation to %d bytes accepted", n)
		}
	}
}
