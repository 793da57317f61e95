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

// TestPublishedIndex (invariant 5): an index published beside an object
// (a CTF object's index, a Parquet object's counts) spares a reader on
// another cache the index pass (no byte of the object streamed), with the
// minibatches and fingerprint of the local file; one made for other
// settings is reported and not used; a local file has none to publish.
func TestPublishedIndex(t *testing.T) {
	ctfPath, pqPath := atisParquet(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "train.ctf", ctfPath)
	s.PutFile("corpora", "train.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	for _, c := range []struct{ url, path string }{{"s3://corpora/train.ctf", ctfPath}, {"s3://corpora/train.parquet", pqPath}} {
		cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 64 << 10}
		local, err := Open(c.path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer local.Close()
		first := publish(t, c.url, cfg)

		// Another host: an empty cache. The open streams nothing.
		var streamed int64
		var mu sync.Mutex
		var warnings []string
		cfg.Warn = func(e ctf.Error) { mu.Lock(); warnings = append(warnings, e.Error()); mu.Unlock() }
		r, err := OpenWith(t.Context(), c.url, cfg, Options{Objects: objstore.Options{CacheDir: t.TempDir()},
			Progress: func(n int64) { streamed += n }})
		if err != nil {
			t.Fatal(err)
		}
		if streamed != 0 || !r.Summary().FromCache || len(warnings) > 0 {
			t.Errorf("%s with the published index: %d bytes indexed, from cache %v, warnings %v", c.url, streamed, r.Summary().FromCache, warnings)
		}
		if sweepDigest(t, r) != sweepDigest(t, local) || !reflect.DeepEqual(r.Fingerprint(), local.Fingerprint()) {
			t.Errorf("%s: the minibatches or the fingerprint with the published index differ from the file's", c.url)
		}
		r.Close()

		// Other settings: the published index is not theirs.
		other := cfg
		other.ChunkBytes = 32 << 10
		r, err = OpenWith(t.Context(), c.url, other, Options{Objects: objstore.Options{CacheDir: t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary().FromCache || len(warnings) != 1 || !strings.Contains(warnings[0], c.url) {
			t.Errorf("%s, an index for other settings: from cache %v, warnings %v", c.url, r.Summary().FromCache, warnings)
		}
		r.Close()

		r, err = OpenWith(t.Context(), c.path, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := PublishIndex(t.Context(), r, first); !errors.Is(err, ErrNotPublishable) {
			t.Errorf("%s: %v, want ErrNotPublishable", c.path, err)
		}
		r.Close()
	}
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
