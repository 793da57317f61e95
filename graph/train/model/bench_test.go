package model

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStep is one training batch with the FB15k settings
// (complex_diagonal, dot, softmax, 1000 positives in chunks of 50, 1000
// uniform negatives per chunk, both sides, dynamic relations) on a table
// of FB15k-237's size, on one goroutine. It reports edges/s (wall clock)
// and cpu-edges/s (per second of the process's CPU time, which a loaded
// machine moves much less).
func BenchmarkStep(b *testing.B) {
	for _, d := range []int{100, 400} {
		b.Run(fmt.Sprintf("dim=%d", d), func(b *testing.B) {
			w, tab, batch := fb15kStep(b, d)
			benchSteps(b, w, tab, batch)
		})
	}
}

// benchSteps times b.N steps of w on batch, after one that grows the
// buffers, and reports edges/s and cpu-edges/s.
func benchSteps(b *testing.B, w *Worker, tab *Table, batch Batch) {
	rng := rand.New(rand.NewPCG(1, 2))
	w.Step(batch, tab, tab, rng) // buffers grown
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		w.Step(batch, tab, tab, rng)
	}
	edges := float64(b.N * len(batch.Lhs))
	b.ReportMetric(edges/b.Elapsed().Seconds(), "edges/s")
	b.ReportMetric(edges/(cpuTime()-cpu0).Seconds(), "cpu-edges/s")
}

// BenchmarkStepAllNegs is one batch of 500 positives of the tuned ComplEx
// setting (examples/fb15k237-complex-tuned.toml: all_negs, softmax, every
// one of FB15k-237's 14,541 entities a candidate on both sides), with the
// dot comparator of that setting and with l2 and cos, whose scores against
// every entity are dot products too (TransE-style configs use l2).
func BenchmarkStepAllNegs(b *testing.B) {
	for _, cmp := range []string{"dot", "l2", "cos"} {
		b.Run("cmp="+cmp, func(b *testing.B) {
			w, tab, batch := fb15kStepWith(b, 100, true, cmp)
			benchSteps(b, w, tab, batch)
		})
	}
}

func fb15kStep(b testing.TB, d int) (*Worker, *Table, Batch) {
	return fb15kStepWith(b, d, false, "dot")
}

func fb15kStepWith(b testing.TB, d int, allNegs bool, comparator string) (*Worker, *Table, Batch) {
	const entities, rels = 14541, 237
	rng := rand.New(rand.NewPCG(3, 4))
	op, _ := NewOperator("complex_diagonal", d)
	var rs []Relation
	for range rels {
		rs = append(rs, Relation{Op: op, Weight: 1, AllNegs: allNegs})
	}
	m, err := New(Settings{Dim: d, Comparator: comparator, Loss: "softmax", NumBatchNegs: 50, NumUniformNegs: 1000,
		RegCoef: 1e-3, Lr: 0.1, RelationLr: 0.1, Dynamic: true}, rs, 1)
	if err != nil {
		b.Fatal(err)
	}
	tab := NewTable(entities, d, 1e-3, rng)
	var batch Batch
	n := 1000
	if allNegs {
		n = 500
	}
	for range n {
		batch.Lhs = append(batch.Lhs, uint32(rng.IntN(entities)))
		batch.Rhs = append(batch.Rhs, uint32(rng.IntN(entities)))
		batch.Rel = append(batch.Rel, uint32(rng.IntN(rels)))
	}
	return NewWorker(m), tab, batch
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
