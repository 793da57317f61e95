package file

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus/ctf"
)

// TestPruneIndexCaches: an index cache no open has used for longer than
// the limit is removed with its directory; one IndexCache has just used
// (however old its files) and a recent one stay; a cache directory
// without index/ is no error.
func TestPruneIndexCaches(t *testing.T) {
	dir := t.TempDir()
	if n, err := PruneIndexCaches(dir, time.Hour); n != 0 || err != nil {
		t.Fatalf("no index/: %d removed, %v", n, err)
	}
	old := time.Now().Add(-2 * time.Hour)
	mk := func(name string) string {
		cfg, err := IndexCache(ctf.Config{}, dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.CacheIndex || filepath.Dir(cfg.CacheDir) != filepath.Join(dir, "index") {
			t.Fatalf("IndexCache(%q): %+v", name, cfg)
		}
		f := filepath.Join(cfg.CacheDir, "c.ctf.batchprep-index")
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{f, cfg.CacheDir} {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		return cfg.CacheDir
	}
	gone, used, recent := mk("/data/gone.ctf"), mk("/data/used.ctf"), mk("s3://b/recent.ctf")
	if _, err := IndexCache(ctf.Config{}, dir, "/data/used.ctf"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(recent, now, now); err != nil {
		t.Fatal(err)
	}
	n, err := PruneIndexCaches(dir, time.Hour)
	if n != 1 || err != nil {
		t.Fatalf("%d removed, %v; want 1", n, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the unused cache is still there: %v", err)
	}
	for _, d := range []string{used, recent} {
		if _, err := os.Stat(filepath.Join(d, "c.ctf.batchprep-index")); err != nil {
			t.Errorf("a cache in use was removed: %v", err)
		}
	}
}
