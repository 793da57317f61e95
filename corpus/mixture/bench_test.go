package mixture

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
)

// BenchmarkMixtureRead reads the same number of samples (two sweeps of
// ATIS x BATCHPREP_BENCH_ATIS_COPIES, default 20) with read's defaults
// (window order, 1 MiB chunks, 64 prefetched, minibatches of 1024) from
// one corpus ("single": the file, two sweeps) and from a mixture of two
// copies of it weighted 1:1 ("mixture": a sweep of each), so that the
// difference is the mixture's cost: planning the interleave and the
// second copy of every minibatch.
func BenchmarkMixtureRead(b *testing.B) {
	src := shared.Need(b, "ctf", "atis", "atis.train.ctf")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	copies := 20
	if n, err := strconv.Atoi(os.Getenv("BATCHPREP_BENCH_ATIS_COPIES")); err == nil && n > 0 {
		copies = n
	}
	dir := b.TempDir()
	var paths [2]string
	for i := range paths {
		paths[i] = filepath.Join(dir, "atis"+strconv.Itoa(i)+".ctf")
		if err := os.WriteFile(paths[i], bytes.Repeat(data, copies), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	streams := []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}
	open := func(p string) *ctf.Reader {
		r, err := ctf.Open(p, ctf.Config{Streams: streams, ChunkBytes: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}
	r0, r1 := open(paths[0]), open(paths[1])
	total := 2 * r0.Layout().TotalSamples()
	cfg := source.Config{Randomize: randomize.Config{Kind: "window"}, Prefetch: true, PrefetchChunks: 64, EpochSize: source.EpochInf}
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			s, err := source.New(r0, cfg)
			if err != nil {
				b.Fatal(err)
			}
			for s.Position() < total {
				if _, err := s.NextK(1024); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
		}
		b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("mixture", func(b *testing.B) {
		for b.Loop() {
			m, err := New([]Corpus{{r0, Weight{Num: 1, Den: 2}, paths[0]}, {r1, Weight{Num: 1, Den: 2}, paths[1]}}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			for m.Position() < total {
				if _, err := m.NextK(1024); err != nil {
					b.Fatal(err)
				}
			}
			m.Close()
		}
		b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
}
