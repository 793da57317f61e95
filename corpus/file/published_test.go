package file

import (
	"errors"
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
// a local file or a Parquet object has none to publish.
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

	first := objstore.Options{CacheDir: t.TempDir()}
	r, err := OpenWith(t.Context(), url, cfg, Options{Objects: first})
	if err != nil {
		t.Fatal(err)
	}
	got, err := PublishIndex(t.Context(), r, first)
	r.Close()
	if err != nil || got != url+IndexSuffix {
		t.Fatalf("PublishIndex: %q, %v", got, err)
	}

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

	for _, path := range []string{ctfPath, "s3://corpora/train.parquet"} {
		r, err := OpenWith(t.Context(), path, cfg, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := PublishIndex(t.Context(), r, first); !errors.Is(err, ErrNotPublishable) {
			t.Errorf("%s: %v, want ErrNotPublishable", path, err)
		}
		r.Close()
	}
}
