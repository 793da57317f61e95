package file

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
)

// benchCopies is how many times the benchmarks replicate ATIS train
// (3.0 MB of CTF): BATCHPREP_BENCH_ATIS_COPIES, default 20.
func benchCopies() int {
	if n, err := strconv.Atoi(os.Getenv("BATCHPREP_BENCH_ATIS_COPIES")); err == nil && n > 0 {
		return n
	}
	return 20
}

// benchFiles writes ATIS train replicated as CTF and converts it to
// Parquet (default row groups) in a temporary directory.
func benchFiles(b *testing.B) (ctfPath, pqPath string) {
	src := shared.Need(b, "ctf", "atis", "atis.train.ctf")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	dir := b.TempDir()
	ctfPath = filepath.Join(dir, "atis.ctf")
	if err := os.WriteFile(ctfPath, bytes.Repeat(data, benchCopies()), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := ctf.Open(ctfPath, ctf.Config{Streams: atisStreams})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	pqPath = filepath.Join(dir, "atis.parquet")
	if _, err := ToParquet(r, pqPath, parquet.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	return ctfPath, pqPath
}

// BenchmarkReadATIS opens ATIS x BATCHPREP_BENCH_ATIS_COPIES (index pass
// included) and reads one sweep in minibatches of 256 samples with the
// read command's defaults (window randomizer, 1 MiB chunks, prefetch), as
// CTF and as Parquet. It reports samples/s and the file's size.
func BenchmarkReadATIS(b *testing.B) {
	ctfPath, pqPath := benchFiles(b)
	for _, c := range []struct{ name, path string }{{"ctf", ctfPath}, {"parquet", pqPath}} {
		b.Run(c.name, func(b *testing.B) {
			info, err := os.Stat(c.path)
			if err != nil {
				b.Fatal(err)
			}
			var samples uint64
			for b.Loop() {
				samples += readSweep(b, c.path)
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(info.Size())/(1<<20), "file-MiB")
		})
	}
}

// readSweep opens path and reads one sweep; it returns the samples read.
func readSweep(b *testing.B, path string) uint64 {
	r, err := Open(path, ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	src, err := source.New(r, source.Config{Randomize: randomize.Config{Kind: "window"}, Prefetch: true, PrefetchChunks: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var n uint64
	for src.Epoch() < 1 {
		mb, err := src.NextK(256)
		if err != nil {
			b.Fatal(fmt.Errorf("%s: %w", path, err))
		}
		n += mb.End - mb.Start
	}
	return n
}
