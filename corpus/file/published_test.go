package file

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/miniotest"
	"github.com/batchprep/batchprep/internal/objstore"
)

// TestPublishedIndex (invariant 5): an index published beside a CTF object
// spares a reader on another cache the index pass (no byte of the object
// streamed: only the edges the index's key checks), with the minibatches of
// the local file; one made for other settings is reported and not used;
// a local file has none to publish.
func TestPublishedIndex(t *testing.T) {
	ctfPath, pqPath := atisParquet(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "train.ctf", ctfPath)
	s.PutFile("corpora", "train.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	const url = "s3://corpora/train.ctf"
	cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 64 << 10}
	local, err := Open(ctfPath, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	want := sweepDigest(t, local)

	first := publish(t, url, cfg)

	// Another host: an empty cache. The open streams nothing.
	var streamed int64
	var mu sync.Mutex
	var warnings []string
	cfg.Warn = func(e ctf.Error) { mu.Lock(); warnings = append(warnings, e.Error()); mu.Unlock() }
	r2, err := OpenWith(t.Context(), url, cfg, Options{Objects: objstore.Options{CacheDir: t.TempDir()},
		Progress: func(n int64) { streamed += n }})
	if err != nil {
		t.Fatal(err)
	}
	if streamed != 0 || !r2.Summary().FromCache || len(warnings) > 0 {
		t.Errorf("with the published index: %d bytes indexed, from cache %v, warnings %v", streamed, r2.Summary().FromCache, warnings)
	}
	if sweepDigest(t, r2) != want {
		t.Error("the minibatches with the published index differ from the file's")
	}
	r2.Close()

	// Other settings: the published index is not theirs.
	other := cfg
	other.ChunkBytes = 32 << 10
	r3, err := OpenWith(t.Context(), url, other, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if r3.Summary().FromCache || len(warnings) != 1 || !strings.Contains(warnings[0], url+IndexSuffix) {
		t.Errorf("an index for other settings: from cache %v, warnings %v", r3.Summary().FromCache, warnings)
	}
	r3.Close()

	r, err := OpenWith(t.Context(), ctfPath, cfg, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PublishIndex(t.Context(), r, first); !errors.Is(err, ErrNotPublishable) {
		t.Errorf("%s: %v, want ErrNotPublishable", ctfPath, err)
	}
	r.Close()
}

// TestPublishedParquetCounts (invariant 5): a Parquet object's counts,
// published beside it, spare a reader on another cache the index pass
// (parquet.Reader.FromCounts), with the minibatches of the local file;
// counts made for other settings are reported and not used.
func TestPublishedParquetCounts(t *testing.T) {
	_, pqPath := atisParquet(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "train.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	const url = "s3://corpora/train.parquet"
	cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 64 << 10}
	local, err := Open(pqPath, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	want := sweepDigest(t, local)

	publish(t, url, cfg)

	var mu sync.Mutex
	var warnings []string
	cfg.Warn = func(e ctf.Error) { mu.Lock(); warnings = append(warnings, e.Error()); mu.Unlock() }
	r2, err := OpenWith(t.Context(), url, cfg, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Summary().FromCache || len(warnings) > 0 {
		t.Errorf("with the published counts: from cache %v, warnings %v", r2.Summary().FromCache, warnings)
	}
	if sweepDigest(t, r2) != want {
		t.Error("the minibatches with the published counts differ from the file's")
	}
	lp, _ := ParquetOf(local)
	rp, _ := ParquetOf(r2)
	if !reflect.DeepEqual(lp.Fingerprint(), rp.Fingerprint()) {
		t.Errorf("fingerprint with the published counts %v, the file's %v", rp.Fingerprint(), lp.Fingerprint())
	}
	r2.Close()

	other := cfg
	other.ChunkBytes = 32 << 10
	r3, err := OpenWith(t.Context(), url, other, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if r3.Summary().FromCache || len(warnings) != 1 || !strings.Contains(warnings[0], "another version of the file or other reader settings") {
		t.Errorf("counts for other settings: from cache %v, warnings %v", r3.Summary().FromCache, warnings)
	}
	r3.Close()
}

// publish opens the object at url with cfg on an empty cache, publishes
// its index and returns the options it read with.
func publish(t *testing.T, url string, cfg ctf.Config) objstore.Options {
	t.Helper()
	first := objstore.Options{CacheDir: t.TempDir()}
	r, err := OpenWith(t.Context(), url, cfg, Options{Objects: first})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary().FromCache {
		t.Error("the first open found an index in an empty cache")
	}
	got, err := PublishIndex(t.Context(), r, first)
	r.Close()
	if err != nil || got != url+IndexSuffix {
		t.Fatalf("PublishIndex: %q, %v", got, err)
	}
	return first
}
