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
