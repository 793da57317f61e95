package serve_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/batchprep/batchprep/internal/miniotest"
	"github.com/batchprep/batchprep/internal/objstore"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// objectReq is the request the object tests make: a small window over
// small chunks, so that chunks are read in a shuffled order.
func objectReq(files ...string) *pb.SequenceRequest {
	return &pb.SequenceRequest{Files: files, Streams: corpusStreams, Mb: "4", Seed: 5, WindowChunks: 2, ChunkSequences: 5}
}

// sameStream fails the test unless got and want are the same messages.
func sameStream(t *testing.T, name string, got, want []*pb.SequenceMinibatch) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%s: %d minibatches, want %d", name, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: minibatch %d differs from the local file's:\n%v\n%v", name, i, got[i], want[i])
		}
	}
}

// logSink collects what a server tells its operator.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestObjects: invariant 15 against a real MinIO. A CTF and a Parquet
// object give the minibatches of the local file, alone and in a mixture
// with a local file; an object in a bucket the server does not allow is
// refused as a path outside the data root is (one code, one text, whether
// it exists or not); a missing object in an allowed bucket is NotFound
// naming the field and the URL, with neither credentials nor the server's
// paths, and the log gets the whole error; the window limit applies.
func TestObjects(t *testing.T) {
	ctfPath, pqPath, bPath := writeCorpus(t, 53), parquetCorpus(t, 53), writeCorpusB(t, 31, nil)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.MakeBucket("secret")
	s.PutFile("corpora", "c.ctf", ctfPath)
	s.PutFile("corpora", "c.parquet", pqPath)
	s.PutFile("secret", "c.ctf", ctfPath)
	miniotest.SetEnv(t, s.Env())
	cache := t.TempDir()
	var log logSink
	_, conn, _ := startServer(t, serve.Options{AllowBuckets: []string{"corpora"},
		Objects: objstore.Options{CacheDir: cache}, Logf: log.logf})

	sameStream(t, "ctf", collect(t, conn, objectReq("s3://corpora/c.ctf")), collect(t, conn, objectReq(ctfPath)))
	sameStream(t, "parquet", collect(t, conn, objectReq("s3://corpora/c.parquet")), collect(t, conn, objectReq(pqPath)))
	mix := func(second string) *pb.SequenceRequest {
		r := objectReq(bPath, second)
		r.Weights = []string{"0.4", "0.6"}
		return r
	}
	sameStream(t, "mixture", collect(t, conn, mix("s3://corpora/c.parquet")), collect(t, conn, mix(pqPath)))
	// A rank split by chunks reads the object exactly (objstore's exact
	// reads), from a cold cache, with the local file's minibatches.
	_, fresh, _ := startServer(t, serve.Options{AllowBuckets: []string{"corpora"}, Objects: objstore.Options{CacheDir: t.TempDir()}})
	for _, files := range [][2]string{{"s3://corpora/c.ctf", ctfPath}, {"s3://corpora/c.parquet", pqPath}} {
		rank := func(file string) *pb.SequenceRequest {
			r := objectReq(file)
			r.Workers, r.Rank, r.Split = 3, 1, "chunks"
			return r
		}
		sameStream(t, "split "+files[0], collect(t, fresh, rank(files[0])), collect(t, conn, rank(files[1])))
	}

	refusal := func(field, url string) string {
		return fmt.Sprintf("%s: %q is not a readable object in the server's allowed buckets (serve --allow-bucket)", field, url)
	}
	for _, url := range []string{"s3://secret/c.ctf", "s3://secret/absent.ctf", "s3://no-such-bucket/c.ctf"} {
		st := callErr(t, conn, false, url)
		if st.Code() != codes.PermissionDenied || st.Message() != refusal("files", url) {
			t.Errorf("%s: %v %q, want PermissionDenied %q", url, st.Code(), st.Message(), refusal("files", url))
		}
	}
	// The same answer in a mixture, naming files[i], as a local path outside.
	_, err := collectErr(t.Context(), conn, mix("s3://secret/c.ctf"))
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || st.Message() != refusal("files[1]", "s3://secret/c.ctf") {
		t.Errorf("in a mixture: %v", err)
	}
	_, err = collectErr(t.Context(), conn, mix("/etc/passwd"))
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "files[1]: \"/etc/passwd\" is not a readable file") {
		t.Errorf("a local path outside, in a mixture: %v", err)
	}

	const absent = "s3://corpora/absent.ctf"
	st := callErr(t, conn, false, absent)
	if st.Code() != codes.NotFound || !strings.HasPrefix(st.Message(), fmt.Sprintf("files: %q", absent)) {
		t.Errorf("a missing object: %v %q, want NotFound naming files and %s", st.Code(), st.Message(), absent)
	}
	for _, secret := range []string{s.SecretKey, s.AccessKey, cache, os.TempDir(), "credentials", "objstore"} {
		if strings.Contains(st.Message(), secret) {
			t.Errorf("the client's message %q shows %q", st.Message(), secret)
		}
	}
	if l := log.String(); !strings.Contains(l, "absent.ctf") || !strings.Contains(l, "objstore") {
		t.Errorf("the server's log lacks the object store's error:\n%s", l)
	}
	st = callErr(t, conn, false, "s3://Bad_Bucket/c.ctf")
	if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "files: ") {
		t.Errorf("a malformed URL: %v %q, want InvalidArgument naming files", st.Code(), st.Message())
	}

	// The window limit counts an object's chunks as a file's.
	_, small, _ := startServer(t, serve.Options{AllowBuckets: []string{"corpora"},
		Objects: objstore.Options{CacheDir: cache}, MaxWindowBytes: 1024})
	req := objectReq("s3://corpora/c.ctf")
	req.WindowChunks, req.ChunkSequences = 64, 2
	_, err = collectErr(t.Context(), small, req)
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "serve --max-window-bytes") {
		t.Errorf("a window past the limit: %v", err)
	}
}

// TestObjectReaderReused: a second call on an object shares the reader
// the first indexed (no index pass, the same minibatches); once the object
// is replaced (another ETag), the next call indexes the new version, reads
// its whole text again, and the old version's reader leaves the cache.
// The stale index left in the server's cache is the log's business: the
// call's warnings, like the local file's, are empty (before, they named
// the index file, a path of the server's).
func TestObjectReaderReused(t *testing.T) {
	first, second := writeCorpus(t, 40), writeCorpusB(t, 23, nil)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "c.ctf", first)
	miniotest.SetEnv(t, s.Env())
	srv, conn, _ := startServer(t, serve.Options{AllowBuckets: []string{serve.AllBuckets},
		Objects: objstore.Options{CacheDir: t.TempDir()}})
	var read atomic.Int64
	srv.SetIndexProgressForTest(func(n int64) { read.Add(n) })
	const url = "s3://corpora/c.ctf"
	call := func(conn *grpc.ClientConn) []*pb.SequenceMinibatch { return collect(t, conn, objectReq(url)) }
	want, wantSecond := collect(t, conn, objectReq(first)), collect(t, conn, objectReq(second))
	passes := srv.IndexPassesStartedForTest()
	sameStream(t, "first call", call(conn), want)
	if n := srv.IndexPassesStartedForTest() - passes; n != 1 || read.Load() == 0 {
		t.Fatalf("first call: %d index passes reading %d bytes, want 1", n, read.Load())
	}
	read.Store(0)
	sameStream(t, "second call", call(conn), want)
	if n := srv.IndexPassesStartedForTest() - passes; n != 1 || read.Load() != 0 {
		t.Errorf("second call: %d index passes in all, %d bytes read; want the first call's reader reused", n, read.Load())
	}

	data, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	s.Put("corpora", "c.ctf", data)
	read.Store(0)
	sameStream(t, "after the replacement", call(conn), wantSecond)
	if n := srv.IndexPassesStartedForTest() - passes; n != 2 || read.Load() != int64(len(data)) {
		t.Errorf("after the replacement: %d index passes in all (want 2), %d of %d bytes read",
			n, read.Load(), len(data))
	}
	// The cache holds the two local files and the new version, not the old one.
	if n, _ := srv.OpenReadersForTest(); n != 3 {
		t.Errorf("%d readers cached, want 3 (the old version's is dropped)", n)
	}
}

// TestObjectsSharedReaderTurnsExact: a rank split by chunks that finds an
// object's reader (CTF or Parquet) opened by a balanced call turns that
// object's reads exact, with the local file's minibatches.
func TestObjectsSharedReaderTurnsExact(t *testing.T) {
	ctfPath, pqPath := writeCorpus(t, 53), parquetCorpus(t, 53)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "c.ctf", ctfPath)
	s.PutFile("corpora", "c.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	srv, conn, _ := startServer(t, serve.Options{AllowBuckets: []string{"corpora"}, Objects: objstore.Options{CacheDir: t.TempDir()}})
	rank := func(file string) *pb.SequenceRequest {
		r := objectReq(file)
		r.Workers, r.Rank, r.Split = 3, 1, "chunks"
		return r
	}
	for i, f := range [][2]string{{"s3://corpora/c.ctf", ctfPath}, {"s3://corpora/c.parquet", pqPath}} {
		sameStream(t, "balanced "+f[0], collect(t, conn, objectReq(f[0])), collect(t, conn, objectReq(f[1])))
		if exact, objects := srv.ExactObjectsForTest(); exact != 0 || objects != i+1 {
			t.Fatalf("after a balanced call on %s: %d of %d objects read exactly; want 0 of %d", f[0], exact, objects, i+1)
		}
	}
	for _, f := range [][2]string{{"s3://corpora/c.parquet", pqPath}, {"s3://corpora/c.ctf", ctfPath}} {
		sameStream(t, "split "+f[0], collect(t, conn, rank(f[0])), collect(t, conn, rank(f[1])))
	}
	if exact, objects := srv.ExactObjectsForTest(); exact != 2 || objects != 2 {
		t.Fatalf("after split calls: %d of %d objects read exactly; want 2 of 2", exact, objects)
	}
	// The balanced calls that follow share the readers, now exact.
	sameStream(t, "balanced after", collect(t, conn, objectReq("s3://corpora/c.ctf")), collect(t, conn, objectReq(ctfPath)))
	sameStream(t, "balanced after", collect(t, conn, objectReq("s3://corpora/c.parquet")), collect(t, conn, objectReq(pqPath)))
}

// TestObjectsMixtureOpensAtOnce: a call's mixture of Parquet objects opens
// them at once (HEADs overlap behind a delaying proxy, which one open at a
// time never shows) and streams what the same mixture of local files
// does; with files[1] and files[2] refused, the answer names files[1], as
// opening them in turn would.
func TestObjectsMixtureOpensAtOnce(t *testing.T) {
	pqPath := parquetCorpus(t, 53)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	var objects, locals []string
	for k := range 4 {
		s.PutFile("corpora", fmt.Sprintf("p%d.parquet", k), pqPath)
		objects = append(objects, fmt.Sprintf("s3://corpora/p%d.parquet", k))
		locals = append(locals, pqPath)
	}
	proxy := s.ProxyFor(t)
	proxy.SetDelay(30 * time.Millisecond)
	miniotest.SetEnv(t, proxy.Env(t, s))
	_, conn, _ := startServer(t, serve.Options{AllowBuckets: []string{"corpora"},
		Objects: objstore.Options{CacheDir: t.TempDir()}})
	mix := func(files ...string) *pb.SequenceRequest {
		r := objectReq(files...)
		r.Weights = []string{"1", "2", "3", "4"}
		return r
	}
	want := collect(t, conn, mix(locals...))
	proxy.ResetCounts()
	sameStream(t, "mixture of objects", collect(t, conn, mix(objects...)), want)
	if n := proxy.MaxHeadsInFlight(); n < 2 {
		t.Errorf("at most %d HEAD in flight: the objects opened one at a time", n)
	}
	_, err := collectErr(t.Context(), conn, mix(objects[0], "s3://secret/a.parquet", "s3://secret/b.parquet", objects[3]))
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || !strings.HasPrefix(st.Message(), "files[1]: ") {
		t.Errorf("files[1] and files[2] refused: %v", err)
	}
}
