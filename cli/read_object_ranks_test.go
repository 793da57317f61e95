package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestReadObjectRanksFetchTheirChunks: 4 ranks of `read s3://...
// --split chunks`, each with a cache of its own holding only the index (as
// after an earlier run), fetch about a quarter of a CTF object of 3 MiB in
// 64 KiB chunks, though its blocks are 1 MiB: the parts of blocks their
// chunks need, not whole blocks. With the balanced split each fetches it
// all. Every rank's sequences are the single worker's of its chunks
// (TestReadRanksSplitChunks checks which).
func TestReadObjectRanksFetchTheirChunks(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "%d |x %d %d |y %d\n", i/3, i, i%97, i%5)
	}
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.Put("corpora", "big.ctf", []byte(b.String()))
	miniotest.SetEnv(t, s.Env())
	size := float64(b.Len())
	flags := []string{"s3://corpora/big.ctf", "--stream", "x:2", "--stream", "y:1", "--mb", "64", "--chunk-bytes", "65536",
		"--format", "summary", "--quiet"}
	indexed := t.TempDir()
	if code, _, errOut := run(t, append([]string{"read", "--cache-dir", indexed, "--max-minibatches", "1"}, flags...)...); code != 0 {
		t.Fatal(errOut)
	}
	share := func(extra ...string) float64 {
		dir := t.TempDir()
		if err := os.CopyFS(filepath.Join(dir, "index"), os.DirFS(filepath.Join(indexed, "index"))); err != nil {
			t.Fatal(err)
		}
		before := cachedBytes(dir)
		if code, _, errOut := run(t, append(append([]string{"read", "--cache-dir", dir}, flags...), extra...)...); code != 0 {
			t.Fatal(errOut)
		}
		return float64(cachedBytes(dir)-before) / size
	}
	for r := 0; r < 4; r++ {
		if got := share("--workers", "4", "--rank", strconv.Itoa(r), "--split", "chunks"); got < 0.15 || got > 0.35 {
			t.Errorf("rank %d of 4, split by chunks: fetched %.2f of the object, want about 0.25", r, got)
		}
	}
	if got := share("--workers", "4", "--rank", "1"); got < 0.99 {
		t.Errorf("rank 1 of 4, balanced split: fetched %.2f of the object, want all of it", got)
	}
}

// cachedBytes is the size of the files under dir.
func cachedBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
