package source

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// Benchmarks (docs/performance-source.md has the figures and commands):
//
//	(d) BenchmarkAssembly: samples/s of minibatch assembly for one-sample
//	    dense data from parsed in-memory chunks, next to a baseline that only
//	    copies the same rows in file order.
//	(c) BenchmarkSeek: Seek to sweep 0 or 10^9, then one Next.
//	(a) BenchmarkCTFRead: randomized read of a generated CTF file vs a
//	    sequential parse of the same file (64 MiB; 1 GiB with BATCHPREP_BIG=1).
//	(b) the same benchmark reports peak HeapInuse/HeapSys against the
//	    window's bytes + 64 MiB.

const assemblySeqs = 1 << 20

// benchWindow is the randomization window (chunks of 4096 sequences) of the
// in-memory benchmarks.
var benchWindow = 4

var (
	assemblyOnce   sync.Once
	assemblyCorpus *corpus.Memory
)

// denseOneSample builds n one-sample sequences with one dense stream of dim
// 8, 4096 sequences per chunk.
func denseOneSample(b *testing.B) *corpus.Memory {
	assemblyOnce.Do(func() {
		seqs := make([]corpus.MemorySequence, assemblySeqs)
		vals := make([]float32, 8*assemblySeqs)
		for i := range seqs {
			seqs[i] = corpus.MemorySequence{ID: strconv.Itoa(i),
				Streams: []corpus.MemoryStream{{Dense: [][]float32{vals[8*i : 8*i+8 : 8*i+8]}}}}
		}
		m, err := corpus.NewMemory([]corpus.Stream{{Name: "x", Dim: 8}}, seqs, corpus.MemoryConfig{ChunkSequences: 4096})
		if err != nil {
			b.Fatal(err)
		}
		assemblyCorpus = m
	})
	return assemblyCorpus
}

func BenchmarkAssembly(b *testing.B) {
	m := denseOneSample(b)
	const K = 1024
	for _, kind := range []string{"none", "window", "cntk"} {
		b.Run(kind, func(b *testing.B) {
			cfg := Config{EpochSize: EpochInf, Randomize: randomize.Config{Kind: kind, WindowChunks: benchWindow}}
			s, err := New(m, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			var n int
			for i := 0; i < b.N; i++ {
				mb, err := s.NextK(K)
				if err != nil {
					b.Fatal(err)
				}
				n += len(mb.Sequences)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "samples/s")
		})
	}
	// Reference: the randomizer's walk alone (cursor over sweeps, K
	// sequences per op), the floor any assembly in that order pays.
	for _, kind := range []string{"window", "cntk"} {
		b.Run("walk-only-"+kind, func(b *testing.B) {
			r, err := randomize.New(randomize.Config{Kind: kind, WindowChunks: benchWindow}, m.Layout())
			if err != nil {
				b.Fatal(err)
			}
			sweep := uint64(0)
			cur, _ := r.Sweep(sweep).Seek(0)
			buf := make([]int, K)
			var sum int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for got := 0; got < K; {
					n := cur.NextN(buf[got:])
					if got += n; got < K {
						sweep++
						cur, _ = r.Sweep(sweep).Seek(0)
					}
				}
				sum += buf[K-1]
			}
			b.ReportMetric(float64(b.N*K)/b.Elapsed().Seconds(), "samples/s")
			if sum < 0 {
				b.Fatal("negative ordinal")
			}
		})
	}
	// Baseline: copy the same rows minibatch by minibatch in file order,
	// with none of the timeline, splitting or bookkeeping.
	b.Run("baseline-copy", func(b *testing.B) {
		l := m.Layout()
		chunks := make([]*corpus.Chunk, l.NumChunks())
		for c := range chunks {
			chunks[c], _ = m.LoadChunk(c)
		}
		var buf []float32
		var ids []string
		seq := 0
		b.ResetTimer()
		var n int
		for i := 0; i < b.N; i++ {
			buf, ids = buf[:0], ids[:0]
			for j := 0; j < K; j++ {
				c := chunks[seq/4096]
				k := seq % 4096
				buf = append(buf, c.Streams[0].Dense[8*k:8*k+8]...)
				ids = append(ids, c.IDs[k])
				seq = (seq + 1) % assemblySeqs
			}
			n += K
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "samples/s")
	})
}

func BenchmarkSeek(b *testing.B) {
	m := denseOneSample(b)
	M := m.Layout().TotalSamples()
	for _, kind := range []string{"none", "window", "cntk"} {
		for _, sweep := range []uint64{0, 1e9} {
			b.Run(fmt.Sprintf("%s/sweep=%d", kind, sweep), func(b *testing.B) {
				s, err := New(m, Config{EpochSize: EpochInf, Randomize: randomize.Config{Kind: kind, WindowChunks: 32}})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := s.Seek(sweep*M + uint64(i%1000)*997); err != nil {
						b.Fatal(err)
					}
					if _, err := s.NextK(256); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// writeBenchCTF writes about size bytes of CTF: sequences of 1..8 lines,
// each line a dense x of dim 16 and a sparse y of dim 1000 (two entries).
func writeBenchCTF(b *testing.B, dir string, size int64) string {
	p := filepath.Join(dir, "bench.ctf")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	var line []byte
	var written int64
	for id := 0; written < size; id++ {
		for j := 1 + rng.IntN(8); j > 0; j-- {
			line = strconv.AppendInt(line[:0], int64(id), 10)
			line = append(line, " |x"...)
			for d := 0; d < 16; d++ {
				line = append(line, ' ')
				line = strconv.AppendFloat(line, float64(rng.IntN(20000))/1000-10, 'f', 3, 32)
			}
			line = append(line, " |y "...)
			line = strconv.AppendInt(line, int64(rng.IntN(1000)), 10)
			line = append(line, ":1 "...)
			line = strconv.AppendInt(line, int64(rng.IntN(1000)), 10)
			line = append(line, ":0.5\n"...)
			w.Write(line)
			written += int64(len(line))
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

var (
	ctfOnce sync.Once
	ctfPath string
	ctfDir  string
)

// benchCTF generates the CTF file once per process (64 MiB, or 1 GiB with
// BATCHPREP_BIG=1) in a temporary directory that TestMain removes. With
// BATCHPREP_BENCH_DIR set, the file is kept in that directory and reused by
// later runs (generating 1 GiB takes minutes; the content is fixed by the
// generator's seed and the size).
func benchCTF(b *testing.B) (string, int64) {
	size := int64(64 << 20)
	if os.Getenv("BATCHPREP_BIG") == "1" {
		size = 1 << 30
	}
	ctfOnce.Do(func() {
		if d := os.Getenv("BATCHPREP_BENCH_DIR"); d != "" {
			p := filepath.Join(d, fmt.Sprintf("bench-%d.ctf", size))
			if _, err := os.Stat(p); err == nil {
				ctfPath = p
				return
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			tmp := writeBenchCTF(b, d, size)
			if err := os.Rename(tmp, p); err != nil {
				b.Fatal(err)
			}
			ctfPath = p
			return
		}
		d, err := os.MkdirTemp("", "batchprep-bench-")
		if err != nil {
			b.Fatal(err)
		}
		ctfDir = d
		ctfPath = writeBenchCTF(b, d, size)
	})
	return ctfPath, size
}

func BenchmarkCTFRead(b *testing.B) {
	path, size := benchCTF(b)
	streams := []corpus.Stream{{Name: "x", Dim: 16}, {Name: "y", Dim: 1000, Sparse: true}}
	// The cache holds MaxResidentChunks()+1 chunks (4 for a window of 2):
	// 4 MiB of a 64 MiB corpus (16x), or 32 MiB of 1 GiB (32x).
	chunkBytes := int64(1 << 20)
	if size >= 1<<30 {
		chunkBytes = 8 << 20
	}
	const windowChunks = 2
	open := func(b *testing.B) *ctf.Reader {
		r, err := ctf.Open(path, ctf.Config{Streams: streams, ChunkBytes: chunkBytes})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	r0 := open(b)
	nChunks := r0.Layout().NumChunks()
	M := r0.Layout().TotalSamples()
	r0.Close()

	b.Run("baseline-sequential-parse", func(b *testing.B) {
		r := open(b)
		defer r.Close()
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for c := 0; c < nChunks; c++ {
				if _, err := r.LoadChunk(c); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	for _, kind := range []string{"none", "window", "none-memlimit", "window-memlimit"} {
		b.Run("source-"+kind, func(b *testing.B) {
			r := open(b)
			defer r.Close()
			limited := strings.HasSuffix(kind, "-memlimit")
			s, err := New(r, Config{EpochSize: EpochInf, Prefetch: true,
				Randomize: randomize.Config{Kind: strings.TrimSuffix(kind, "-memlimit"), WindowChunks: windowChunks}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// The heap held before reading: the reader's index and the layout,
			// which grow with the corpus's sequence count, not with the window.
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			baseInuse := ms.HeapInuse
			window := int64(s.ResidentChunks()) * chunkBytes
			if limited {
				// What batchprep read does by default (cli/read.go).
				old := debug.SetMemoryLimit(MemoryLimit(int64(baseInuse), window))
				defer debug.SetMemoryLimit(old)
			}
			baseRSS := rssBytes()
			var peakInuse, peakSys, peakRSS uint64
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				end := uint64(i+1) * M
				for n := 0; s.Position() < end; n++ {
					if _, err := s.NextK(4096); err != nil {
						b.Fatal(err)
					}
					if n%64 == 0 {
						runtime.ReadMemStats(&ms)
						peakInuse, peakSys = max(peakInuse, ms.HeapInuse), max(peakSys, ms.HeapSys)
						peakRSS = max(peakRSS, rssBytes())
					}
				}
			}
			b.StopTimer()
			const MiB = 1 << 20
			b.ReportMetric(float64(baseInuse)/MiB, "index-HeapInuse-MiB")
			b.ReportMetric(float64(peakInuse)/MiB, "peak-HeapInuse-MiB")
			b.ReportMetric(float64(peakInuse-baseInuse)/MiB, "read-HeapInuse-MiB")
			b.ReportMetric(float64(peakSys)/MiB, "peak-HeapSys-MiB")
			b.ReportMetric(float64(baseRSS)/MiB, "index-RSS-MiB")
			b.ReportMetric(float64(peakRSS)/MiB, "peak-RSS-MiB")
			b.ReportMetric(float64(window)/MiB+64, "bound-MiB")
		})
	}
}

// rssBytes is the process's resident set size (Linux; 0 elsewhere).
func rssBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// TestMain removes the generated benchmark corpus.
func TestMain(m *testing.M) {
	code := m.Run()
	if ctfDir != "" {
		os.RemoveAll(ctfDir)
	}
	os.Exit(code)
}

// BenchmarkNewAtSweep is what a server does for each new client on a
// corpus it has indexed already: a Source at a far position (sweep 10^9 of
// 1M sequences) and its first minibatch. The layout's identity (its hash,
// for the state's fingerprint) is part of New's cost.
func BenchmarkNewAtSweep(b *testing.B) {
	m := denseOneSample(b)
	M := m.Layout().TotalSamples()
	cfg := Config{EpochSize: EpochInf, Randomize: randomize.Config{Kind: "window", WindowChunks: 32}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := New(m, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Seek(1e9 * M); err != nil {
			b.Fatal(err)
		}
		if _, err := s.NextK(1024); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
