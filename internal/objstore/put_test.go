package objstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestPut: a file put as an object reads back byte for byte, through
// transient failures (invariant 11); a missing bucket is an error naming
// the bucket and the key.
func TestPut(t *testing.T) {
	_, p, _ := serveProxied(t, 10)
	data := randomBytes(3*testBlock+17, 7)
	path := filepath.Join(t.TempDir(), "out.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "s3://" + testBucket + "/put/out.bin"
	p.FailNext(miniotest.SlowDown, 1)
	p.FailNext(miniotest.InternalError, 1)
	etag, err := Put(context.Background(), url, path, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Injected() != 2 {
		t.Errorf("%d faults injected, want 2", p.Injected())
	}
	o, err := Open(context.Background(), url, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	got := make([]byte, o.Size())
	if _, err := o.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || o.ETag() != etag {
		t.Errorf("read back %d bytes (etag %s), put %d (etag %s)", len(got), o.ETag(), len(data), etag)
	}

	_, err = Put(context.Background(), "s3://no-bucket/k/out.bin", path, testOptions(t))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"no-bucket"`) || !strings.Contains(err.Error(), `"k/out.bin"`) {
		t.Errorf("put to a missing bucket: %v", err)
	}
}

// TestGet: an object downloaded to a file is its bytes, through a 503 and
// a body cut short, in GET requests only (invariant 11); the cache is not
// used; a missing object is ErrNotFound and leaves the file as it was.
func TestGet(t *testing.T) {
	_, p, data := serveProxied(t, 5*testBlock+3)
	path := filepath.Join(t.TempDir(), "got.bin")
	opt := testOptions(t)
	n := p.Requests()
	p.FailRequest(miniotest.SlowDown, n+1)
	p.FailRequest(miniotest.ShortBody, n+2)
	if err := Get(context.Background(), testURL, path, opt); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes (%v), want the object's %d", len(got), err, len(data))
	}
	if p.Injected() != 2 || p.Requests()-n != 3 {
		t.Errorf("%d faults injected in %d requests, want 2 in 3 GETs", p.Injected(), p.Requests()-n)
	}
	if files := cacheFiles(opt.CacheDir); len(files) != 0 {
		t.Errorf("Get wrote %d cache files", len(files))
	}
	err := Get(context.Background(), "s3://"+testBucket+"/absent", path, opt)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing object: %v, want ErrNotFound", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Error("a failed Get changed the file")
	}
}
