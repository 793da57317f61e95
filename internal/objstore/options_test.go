package objstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOptionsDefaults(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Options{FetchConcurrency: 8, FetchTimeout: 2 * time.Minute, CacheDir: filepath.Join("/tmp/xdg", "batchprep", "objects"), CacheBytes: 10 << 30, blockSize: 1 << 20}
	if o.String() != want.String() || o.blockSize != want.blockSize {
		t.Fatalf("defaults %v; want %v", o, want)
	}
	given := Options{FetchConcurrency: 3, FetchTimeout: time.Second, CacheDir: "/c", CacheBytes: 5}
	if o, _ := given.withDefaults(); o.FetchConcurrency != 3 || o.FetchTimeout != time.Second || o.CacheDir != "/c" || o.CacheBytes != 5 {
		t.Fatalf("given values changed: %v", o)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{FetchConcurrency: -1}, "fetch-concurrency -1"},
		{Options{FetchTimeout: -time.Second}, "fetch-timeout -1s"},
		{Options{CacheBytes: -2}, "cache-bytes -2"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.o, err, c.want)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// One client per AWS environment: opens with the same environment share
// it (and its connections); another endpoint, region or key makes another.
func TestClientSharedByEnvironment(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "r1")
	ctx := context.Background()
	opt, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	a, err := sharedClient(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := sharedClient(ctx, opt); b != a {
		t.Fatal("the same environment made a second client")
	}
	t.Setenv("AWS_REGION", "r2")
	c, _ := sharedClient(ctx, opt)
	if c == a || c.s3.Options().Region != "r2" {
		t.Fatalf("another region: client %p (first %p), region %q", c, a, c.s3.Options().Region)
	}
	more := opt
	more.FetchConcurrency = 64
	if d, _ := sharedClient(ctx, more); d == c {
		t.Fatal("another connection pool size shared a client")
	}
}
