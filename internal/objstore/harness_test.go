package objstore

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// testBucket and testKey name the object most tests read.
const (
	testBucket = "test-bucket"
	testKey    = "dir/corpus.bin"
	testURL    = "s3://" + testBucket + "/" + testKey
	testBlock  = 4096 // small blocks keep test objects small
)

// randomBytes returns n bytes from a fixed seed.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// serve starts MinIO with one object of n random bytes and points the AWS
// environment at it.
func serve(t *testing.T, n int) (*miniotest.Server, []byte) {
	t.Helper()
	s := miniotest.Start(t)
	s.MakeBucket(testBucket)
	data := randomBytes(n, uint64(n))
	s.Put(testBucket, testKey, data)
	miniotest.SetEnv(t, s.Env())
	return s, data
}

// serveProxied is serve with a fault-injecting proxy between client and
// server.
func serveProxied(t *testing.T, n int) (*miniotest.Server, *miniotest.Proxy, []byte) {
	t.Helper()
	s, data := serve(t, n)
	p := s.ProxyFor(t)
	miniotest.SetEnv(t, p.Env(t, s))
	return s, p, data
}

func testOptions(t *testing.T) Options {
	return Options{CacheDir: t.TempDir(), blockSize: testBlock, FetchTimeout: 30 * time.Second}
}

func open(t *testing.T, opt Options) *Object {
	t.Helper()
	o, err := Open(context.Background(), testURL, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// readRange reads [off, off+n) and checks it against data.
func readRange(t *testing.T, o *Object, data []byte, off, n int64) {
	t.Helper()
	p := make([]byte, n)
	k, err := o.ReadAt(p, off)
	want := data[off:min(off+n, int64(len(data)))]
	if int64(len(want)) < n {
		if k != len(want) || err == nil {
			t.Fatalf("ReadAt(%d, %d) past the end: %d, %v; want %d and io.EOF", n, off, k, err, len(want))
		}
	} else if err != nil || k != int(n) {
		t.Fatalf("ReadAt(%d bytes at %d): %d, %v", n, off, k, err)
	}
	if !bytes.Equal(p[:k], want) {
		t.Fatalf("ReadAt(%d bytes at %d): wrong bytes", n, off)
	}
}
