package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/objstore"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestLocalIndexCached: with CacheIndex a server keeps a local CTF file's
// index in its cache directory, and a later server (the Python client's
// private server of the next epoch) opens the unchanged file without
// reading its text for an index pass, streaming what a server without the
// cache streams. A changed file is indexed again; that its old index was
// stale is the server's log's business, never the client's (it names the
// server's cache). Without CacheIndex nothing is written there; with it a
// Parquet file's counts are kept there too.
func TestLocalIndexCached(t *testing.T) {
	path := writeCorpus(t, 60)
	req := func() *pb.SequenceRequest {
		return &pb.SequenceRequest{Files: []string{path}, Streams: corpusStreams, Mb: "4", Seed: 5, WindowChunks: 2, ChunkSequences: 5}
	}
	plainCache := t.TempDir()
	_, plain, _ := startServer(t, serve.Options{Objects: objstore.Options{CacheDir: plainCache}})
	want := collect(t, plain, req())

	cache := t.TempDir()
	var log logSink
	// indexed runs a call on a new server with CacheIndex and returns its
	// minibatches and the bytes its index pass read.
	indexed := func() ([]*pb.SequenceMinibatch, int64) {
		srv, conn, _ := startServer(t, serve.Options{CacheIndex: true, Objects: objstore.Options{CacheDir: cache}, Logf: log.logf})
		var read atomic.Int64
		srv.SetIndexProgressForTest(func(n int64) { read.Add(n) })
		return collect(t, conn, req()), read.Load()
	}
	size := fileSize(t, path)
	got, read := indexed()
	sameStream(t, "first server", got, want)
	if read != size {
		t.Fatalf("first server: the index pass read %d of %d bytes", read, size)
	}
	caches, _ := filepath.Glob(filepath.Join(cache, "index", "*", "corpus.ctf.batchprep-index"))
	if len(caches) != 1 {
		t.Fatalf("index caches %v, want one", caches)
	}
	got, read = indexed()
	sameStream(t, "second server", got, want)
	if read != 0 {
		t.Errorf("second server: an index pass read %d bytes; want the cached index", read)
	}

	// The file changes under the same name: a new index, the client told
	// nothing about the old one.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "900 |x 1 2 |y 3:1 |z 1\n"...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	want = collect(t, plain, req())
	got, read = indexed()
	sameStream(t, "after the change", got, want)
	if read != int64(len(data)) {
		t.Errorf("after the change: the index pass read %d of %d bytes", read, len(data))
	}
	for _, m := range got {
		for _, w := range m.Warnings {
			t.Errorf("a warning reached the client: %q", w)
		}
	}
	if l := log.String(); !strings.Contains(l, "stale") || !strings.Contains(l, cache) {
		t.Errorf("the server's log does not tell of the stale index:\n%s", l)
	}
	got, read = indexed()
	sameStream(t, "after the change, again", got, want)
	if read != 0 {
		t.Errorf("after the change, again: an index pass read %d bytes", read)
	}

	pq := parquetCorpus(t, 53)
	preq := req()
	preq.Files = []string{pq}
	_, conn, _ := startServer(t, serve.Options{CacheIndex: true, Objects: objstore.Options{CacheDir: cache}})
	collect(t, conn, preq)
	if all, _ := filepath.Glob(filepath.Join(cache, "index", "*", filepath.Base(pq)+".batchprep-index")); len(all) != 1 {
		t.Errorf("the Parquet file's counts kept %v, want once", all)
	}
	if entries, _ := os.ReadDir(plainCache); len(entries) != 0 {
		t.Errorf("a server without CacheIndex wrote %d entries in its cache directory", len(entries))
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}
