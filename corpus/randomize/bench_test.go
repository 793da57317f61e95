package randomize

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// Benchmark corpus: 256 chunks of 4096 sequences (2^20 sequences) of 1..8
// samples, as a 8 GiB CTF file in 32 MiB chunks would give.
var benchLayout = sync.OnceValue(func() *corpus.Layout {
	r := rand.New(rand.NewPCG(1, 1))
	cs := make([][]uint32, 256)
	for c := range cs {
		cs[c] = make([]uint32, 4096)
		for i := range cs[c] {
			cs[c][i] = 1 + uint32(r.IntN(8))
		}
	}
	return layoutOf(cs...)
})

var benchConfigs = []Config{
	{Kind: "none"},
	{Kind: "window", WindowChunks: 16},
	{Kind: "window"}, // 128 chunks: windows of 2^19 sequences
	{Kind: "cntk", WindowChunks: 16},
}

func benchName(cfg Config) string {
	if cfg.Kind == "none" {
		return "none"
	}
	return fmt.Sprintf("%s-w%d", cfg.Kind, max(cfg.WindowChunks, DefaultWindowChunks*btoi(cfg.WindowChunks == 0)))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSeek: Sweep(s).Seek(off) at sweep 0 and at sweep 10^9 (the two
// must cost the same: invariant 8). For cntk the sweep is cached after the
// first call, so this is the cost of a seek inside the cached sweep; see
// BenchmarkCNTKSweep for the cost of a new sweep.
func BenchmarkSeek(b *testing.B) {
	l := benchLayout()
	M := l.TotalSamples()
	for _, cfg := range benchConfigs {
		rz := mustNew(b, cfg, l)
		for _, s := range []uint64{0, 1e9} {
			b.Run(fmt.Sprintf("%s/sweep=%d", benchName(cfg), s), func(b *testing.B) {
				rz.Sweep(s).Seek(0) // cntk: compute and cache the sweep outside the timing
				off := uint64(0)
				for b.Loop() {
					off = (off + 7919*131) % M
					c, _ := rz.Sweep(s).Seek(off)
					c.Next()
				}
			})
		}
	}
}

// BenchmarkWalk walks whole sweeps (a new sweep every iteration, so cntk
// pays for computing each) and reports sequences per second, one Next call
// per sequence and (NextN-1024) in batches as the source draws them. The baseline
// is a plain loop over a slice of the same length (walk-baseline).
func BenchmarkWalk(b *testing.B) {
	l := benchLayout()
	N := l.NumSequences()
	b.Run("baseline-slice", func(b *testing.B) {
		order := make([]int32, N)
		var sum int
		for b.Loop() {
			for _, q := range order {
				sum += int(q)
			}
		}
		b.ReportMetric(float64(N)*float64(b.N)/b.Elapsed().Seconds(), "seq/s")
		_ = sum
	})
	for _, cfg := range benchConfigs {
		rz := mustNew(b, cfg, l)
		b.Run(benchName(cfg), func(b *testing.B) {
			s := uint64(0)
			var sum int
			for b.Loop() {
				c, _ := rz.Sweep(s).Seek(0)
				for q, ok := c.Next(); ok; q, ok = c.Next() {
					sum += q
				}
				s++
			}
			b.ReportMetric(float64(N)*float64(b.N)/b.Elapsed().Seconds(), "seq/s")
			_ = sum
		})
		b.Run(benchName(cfg)+"/NextN-1024", func(b *testing.B) {
			s := uint64(0)
			buf := make([]int, 1024)
			var sum int
			for b.Loop() {
				c, _ := rz.Sweep(s).Seek(0)
				for n := c.NextN(buf); n > 0; n = c.NextN(buf) {
					sum += buf[n-1]
				}
				s++
			}
			b.ReportMetric(float64(N)*float64(b.N)/b.Elapsed().Seconds(), "seq/s")
			_ = sum
		})
	}
}

// BenchmarkCNTKSweep: the O(sweep) cost of seeking into a sweep that is not
// cached (the one exception to SPEC A2.2), at sweep 0 and 10^9.
func BenchmarkCNTKSweep(b *testing.B) {
	l := benchLayout()
	rz := mustNew(b, Config{Kind: "cntk", WindowChunks: 16}, l)
	for _, base := range []uint64{0, 1e9} {
		b.Run(fmt.Sprintf("sweep=%d", base), func(b *testing.B) {
			i := uint64(0)
			for b.Loop() {
				c, _ := rz.Sweep(base + i%2).Seek(12345)
				c.Next()
				i++
			}
		})
	}
}
