package plan

import (
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/mix"
)

// The benchmark graph: 10 M edges, 4 relations, 1 M entities, spread
// uniformly over p x p buckets (built once, in memory: the store read is
// then a copy of the columns, which the copy baseline measures alone).
const benchEdges = 10_000_000

var benchGraphs sync.Map

func benchGraph(p int, weights bool) *MemReader {
	key := [2]int{p, map[bool]int{false: 0, true: 1}[weights]}
	if g, ok := benchGraphs.Load(key); ok {
		return g.(*MemReader)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	per := int(1_000_000 / p)
	set := map[graph.Bucket]*graph.Edges{}
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			set[graph.Bucket{Lhs: i, Rhs: j}] = &graph.Edges{}
		}
	}
	for k := 0; k < benchEdges; k++ {
		l, r := rng.IntN(1_000_000), rng.IntN(1_000_000)
		e := set[graph.Bucket{Lhs: min(l/per, p-1), Rhs: min(r/per, p-1)}]
		e.Lhs, e.Rhs = append(e.Lhs, uint32(l%per)), append(e.Rhs, uint32(r%per))
		e.Rel, e.Ordinal = append(e.Rel, rng.Uint32N(4)), append(e.Ordinal, uint64(k))
		if weights {
			e.Weight = append(e.Weight, 1)
		}
	}
	g := &MemReader{L: p, R: p, Sets: []map[graph.Bucket]*graph.Edges{set}}
	benchGraphs.Store(key, g)
	return g
}

// cpuTime is the process's user+system CPU time so far. Benchmarks report
// CPU ns per edge next to wall-clock edges/s: on a machine shared with other
// jobs the wall figure drops with the load, the CPU figure much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportRates(b *testing.B, edges int, cpu0 time.Duration) {
	total := float64(edges) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "edges/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/total, "cpu-ns/edge")
}

func benchOptions(dynamic bool) Options {
	return Options{NumEpochs: 1, MaxEdgesPerChunk: 1e9, BucketOrder: "inside_out", Workers: 2,
		BatchSize: 1000, EvalFraction: 0.05, DynamicRelations: dynamic, NumRelations: 4, Seed: 1}
}

// BenchmarkPrepare runs one epoch of the plan: for every bucket, load its
// chunk, hold out 5%, shuffle, split among 2 workers, batch (relation
// sampling, or dynamic), and visit every batch record.
func BenchmarkPrepare(b *testing.B) {
	for _, c := range []struct {
		name    string
		p       int
		dynamic bool
		weights bool
	}{
		{"P1/relations", 1, false, false},
		{"P1/relations+weights", 1, false, true},
		{"P1/dynamic", 1, true, false},
		{"P4/relations", 4, false, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := benchGraph(c.p, c.weights)
			// One iterator runs b.N epochs, reusing its buffers as a
			// training run does.
			o := benchOptions(c.dynamic)
			o.NumEpochs = b.N
			p := mustPlan(b, g, o)
			b.ResetTimer()
			cpu0 := cpuTime()
			it := mustIter(b, p, p.Start())
			drainBatches(b, it)
			mem := it.MemoryBytes()
			reportRates(b, benchEdges, cpu0)
			largest := 0
			for _, e := range g.Sets[0] {
				largest = max(largest, e.Len())
			}
			b.ReportMetric(float64(mem)/float64(largest), "B/edge")
		})
	}
}

// Baselines measured in the same run: a plain copy of one 10 M-edge chunk's
// columns (what loading from memory costs), and one math/rand/v2 Shuffle
// of 10 M uint32 (a single-threaded uniform shuffle of the same n).
func BenchmarkBaseline(b *testing.B) {
	g := benchGraph(1, false)
	src := g.Sets[0][graph.Bucket{}]
	b.Run("copy-columns", func(b *testing.B) {
		var dst graph.Edges
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			dst.Reset()
			if err := g.ReadEdges(0, graph.Bucket{}, 0, src.Len(), &dst); err != nil {
				b.Fatal(err)
			}
		}
		reportRates(b, benchEdges, cpu0)
	})
	b.Run("rand-shuffle", func(b *testing.B) {
		a := make([]uint32, benchEdges)
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			r := mix.Rand(uint64(i))
			r.Shuffle(len(a), func(x, y int) { a[x], a[y] = a[y], a[x] })
		}
		reportRates(b, benchEdges, cpu0)
	})
}

// drainBatches runs it to the end and checks that the epochs held about the
// expected number of batches (benchEdges edges, 5% held out, batch size 1000).
func drainBatches(b *testing.B, it *Iter) {
	b.Helper()
	batches := 0
	for it.Next() {
		if it.Record().Kind == BatchRecord {
			batches++
		}
	}
	if it.Err() != nil || batches < b.N*benchEdges*9/10/1000 {
		b.Fatal(it.Err(), batches)
	}
}
