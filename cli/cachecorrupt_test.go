package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// For index caches: every damage to a cache
// (delete, truncate, empty, the cache of another file, a flipped bit at
// each of ~230 bytes) is reported by verify naming the cache file; read never uses
// it: it warns naming the file, indexes the data again, and prints exactly
// what an uncached read prints.
func TestCorruptIndexCacheNotUsed(t *testing.T) {
	f := newBigFixture(t, 300, 10)
	corpus := filepath.Join(f.dir, f.corpus)
	cache := corpus + ".batchprep-index"
	args := []string{"read", corpus, "--stream", "x:2", "--mb", "16", "--quiet", "--chunk-bytes", "1KiB"}
	_, want, _ := run(t, args...)
	if code, out, e := run(t, append(args, "--cache-index")...); code != 0 || out != want {
		t.Fatalf("cached read: %d %s", code, e)
	}
	orig := must(os.ReadFile(cache))
	// The cache of another corpus, moved beside this one.
	otherCorpus := filepath.Join(t.TempDir(), "o.ctf")
	os.WriteFile(otherCorpus, []byte("1 |x 1 2\n2 |x 3 4\n"), 0o644)
	if code, _, e := run(t, "read", otherCorpus, "--stream", "x:2", "--quiet", "--cache-index", "--chunk-bytes", "1KiB"); code != 0 {
		t.Fatal(e)
	}
	other := must(os.ReadFile(otherCorpus + ".batchprep-index"))
	vargs := []string{"verify", "--index-cache", corpus, "--stream", "x:2", "--chunk-bytes", "1KiB"}
	if code, out, _ := run(t, vargs...); code != 0 {
		t.Fatalf("verify of a sound cache: %s", out)
	}
	check := func(what string) {
		t.Helper()
		code, out, _ := run(t, vargs...)
		if code != 1 || !strings.Contains(out, cache) {
			t.Errorf("%s: verify exit %d: %s", what, code, out)
		}
		code, got, errOut := run(t, append(args, "--cache-index")...)
		if code != 0 || got != want {
			t.Errorf("%s: read with the damaged cache: exit %d, output differs: %v (%s)", what, code, got != want, errOut)
		}
		if _, err := os.Stat(cache); err == nil && !strings.Contains(errOut, cache) && what != "delete" {
			t.Errorf("%s: read did not report the damaged cache: %q", what, errOut)
		}
		if again := must(os.ReadFile(cache)); !bytes.Equal(again, orig) {
			t.Errorf("%s: read did not rewrite a sound cache", what)
		}
	}
	for _, d := range damages() {
		if err := d.apply(cache, orig, other); err != nil {
			t.Fatal(err)
		}
		check(d.name)
	}
	// Every byte of the header and the key, the last bytes (the tables'
	// padding), and every 29th byte between (the summary, its CRC, the
	// tables): a run over every byte took a minute.
	flipped, step := 0, 29
	if raceEnabled {
		step = 97
	}
	for i := range orig {
		if i >= 96 && i < len(orig)-8 && i%step != 0 {
			continue
		}
		b := append([]byte(nil), orig...)
		b[i] ^= 1
		os.WriteFile(cache, b, 0o644)
		check("flip byte " + itoa(i))
		flipped++
	}
	t.Logf("%d of the cache's %d bytes flipped one at a time", flipped, len(orig))
}
