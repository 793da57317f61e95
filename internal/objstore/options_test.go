package objstore

import (
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
