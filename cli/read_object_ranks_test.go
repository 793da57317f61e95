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

// TestReadObjectRanksFetchTheirChunks: once `read --publish-index` has put
// the index of a CTF object of 3 MiB (64 KiB chunks; blocks are 1 MiB)
// beside it, 4 ranks of `read --split chunks`, each with an empty cache as
// on hosts of their own, fetch the index and about a quarter of the
// object: no index pass, and only the parts of blocks their chunks need.
// With the balanced split a rank fetches it all. Each rank streams what it
// streams from the local file (TestReadRanksSplitChunks checks which
// sequences those are). A local file has no index to publish.
func TestReadObjectRanksFetchTheirChunks(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "%d |x %d %d |y %d\n", i/20, i, i%97, i%5)
	}
	local := filepath.Join(t.TempDir(), "big.ctf")
	os.WriteFile(local, []byte(b.String()), 0o644)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "big.ctf", local)
	miniotest.SetEnv(t, s.Env())
	rankShares(t, "s3://corpora/big.ctf", local, "--stream", "x:2", "--stream", "y:1", "--mb", "64", "--chunk-bytes", "65536")
	if code, _, errOut := run(t, "read", local, "--stream", "x:2", "--stream", "y:1", "--publish-index"); code != 2 || !strings.Contains(errOut, "is a local file") {
		t.Errorf("--publish-index of a local file: exit %d, %s", code, errOut)
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

// TestReadParquetObjectRanksFetchTheirPages: a Parquet object converted
// with pages that end with read's chunks (convert --read-chunk-bytes), its
// counts published by `read --publish-index`: 4 ranks of `read --split
// chunks`, each with an empty cache, fetch the counts and about a quarter
// of the object (the pages of their own chunks, no index pass), and each
// streams what it streams from the local file. With the balanced split a
// rank fetches it all.
func TestReadParquetObjectRanksFetchTheirPages(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "%d |x %d %d |y %d %d\n", i/20, i, i%97, i%5, i%89)
	}
	dir := t.TempDir()
	ctfPath, pqPath := filepath.Join(dir, "big.ctf"), filepath.Join(dir, "big.parquet")
	os.WriteFile(ctfPath, []byte(b.String()), 0o644)
	streams := []string{"--stream", "x:2", "--stream", "y:2"}
	if code, _, errOut := run(t, append([]string{"convert", ctfPath, pqPath, "--read-chunk-bytes", "128KiB"}, streams...)...); code != 0 {
		t.Fatal(errOut)
	}
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "big.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	rankShares(t, "s3://corpora/big.parquet", pqPath, append([]string{"--mb", "64", "--chunk-bytes", "131072"}, streams...)...)
}

// rankShares publishes the index of the object at url (a copy of the local
// file local) with `read --publish-index`, then has 4 ranks of `read
// --split chunks`, each with an empty cache as on hosts of their own,
// fetch the index and about a quarter of the object, each streaming what
// it streams from the local file; a rank of the balanced split fetches it
// all.
func rankShares(t *testing.T, url, local string, flags ...string) {
	t.Helper()
	info, err := os.Stat(local)
	if err != nil {
		t.Fatal(err)
	}
	flags = append(flags, "--quiet")
	code, _, errOut := run(t, append([]string{"read", url, "--cache-dir", t.TempDir(), "--max-minibatches", "1", "--format", "summary", "--publish-index"}, flags...)...)
	if code != 0 || !strings.Contains(errOut, "published the index of "+url+" as "+url+".batchprep-index") {
		t.Fatalf("--publish-index: exit %d, %s", code, errOut)
	}
	share := func(extra ...string) float64 {
		dir := t.TempDir()
		code, out, errOut := run(t, append(append([]string{"read", url, "--cache-dir", dir, "--format", "jsonl"}, flags...), extra...)...)
		if code != 0 {
			t.Fatal(errOut)
		}
		if _, want, _ := run(t, append(append([]string{"read", local, "--format", "jsonl"}, flags...), extra...)...); out != want {
			t.Errorf("%s %v: the object's minibatches differ from the local file's", url, extra)
		}
		got := float64(cachedBytes(dir)) / float64(info.Size())
		t.Logf("%s %v: %.3f of the object's size cached", url, extra, got)
		return got
	}
	for r := 0; r < 4; r++ {
		if got := share("--workers", "4", "--rank", strconv.Itoa(r), "--split", "chunks"); got < 0.15 || got > 0.35 {
			t.Errorf("%s, rank %d of 4, split by chunks: fetched %.2f of the object with the index, want about 0.25 and the index", url, r, got)
		}
	}
	if got := share("--workers", "4", "--rank", "1"); got < 0.99 {
		t.Errorf("%s, rank 1 of 4, balanced split: fetched %.2f of the object, want all of it", url, got)
	}
}
