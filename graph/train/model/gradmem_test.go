package model

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// scaleBatch draws n positives over tables of nl and nr rows.
func scaleBatch(rng *rand.Rand, n, nl, nr int) Batch {
	var b Batch
	for range n {
		b.Lhs = append(b.Lhs, uint32(rng.IntN(nl)))
		b.Rhs = append(b.Rhs, uint32(rng.IntN(nr)))
		b.Rel = append(b.Rel, 0)
	}
	return b
}

// Invariant 9: a mapped worker trains the same bits as an ordinary one:
// across batches whose summed gradients outgrow the first mapping (it is
// grown in place), a Release between batches, and a switch to smaller
// tables.
func TestMappedWorkerSameValues(t *testing.T) {
	c := stepCase{op: "complex_diagonal", cmp: "dot", loss: "softmax", batchNegs: 50, uniform: 200, reg: 1e-3}
	const d = 8
	// With early updates (the default) a side's summed gradients hold the
	// positives and repeated negatives only; late, every row of the batch.
	for _, late := range []bool{true, false} {
		mappedSameValues(t, c, d, late)
	}
}

func mappedSameValues(t *testing.T, c stepCase, d int, late bool) {
	type run struct {
		m          *Model
		w          *Worker
		L, R, l, r *Table
	}
	runs := make([]run, 2)
	for i := range runs {
		m, _, _, _ := stepModel(t, c, d)
		rng := rand.New(rand.NewPCG(5, 6))
		runs[i] = run{m: m, L: NewTable(20000, d, 0.5, rng), R: NewTable(15000, d, 0.5, rng),
			l: NewTable(3000, d, 0.5, rng), r: NewTable(2000, d, 0.5, rng)}
	}
	runs[0].w, runs[1].w = NewWorker(runs[0].m), NewMappedWorker(runs[1].m)
	runs[0].w.late, runs[1].w.late = late, late
	defer runs[1].w.Release()
	for i := range runs {
		r := &runs[i]
		brng, nrng := rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(9, 10))
		for step := range 4 {
			// 1000 positives, 20 chunks of 200 uniform negatives: up to
			// 5000 rows a side, past the first mapping's 4096.
			L, R := r.L, r.R
			if step == 3 {
				L, R = r.l, r.r
			}
			r.w.Step(scaleBatch(brng, 1000, L.Rows, R.Rows), L, R, nrng)
			if step == 1 {
				r.w.Release()
			}
		}
	}
	if n := len(runs[1].w.gl.rows); late && n <= 4096 && cap(runs[1].w.gl.g) <= 4096*d {
		t.Errorf("the last batch touched %d rows of a side: the gradients never outgrew the first mapping", n)
	}
	for k, pair := range [][2]*Table{{runs[0].L, runs[1].L}, {runs[0].R, runs[1].R}, {runs[0].l, runs[1].l}, {runs[0].r, runs[1].r}} {
		if !slices.Equal(pair[0].Emb, pair[1].Emb) || !slices.Equal(pair[0].Acc, pair[1].Acc) {
			t.Errorf("table %d differs between an ordinary and a mapped worker (late %v)", k, late)
		}
	}
	for r, ps := range runs[0].m.Params {
		for s, p := range ps {
			if p != nil && !slices.Equal(p.P, runs[1].m.Params[r][s].P) {
				t.Errorf("relation %d side %d differs (late %v)", r, s, late)
			}
		}
	}
}

// A mapped worker's row→slot indexes and summed gradients are outside the
// Go heap: training a batch on tables of a million rows grows the heap by
// the chunk's scratch only, not by the 8 MiB of two sides' indexes.
func TestMappedWorkerOutsideHeap(t *testing.T) {
	const d, rows = 4, 1 << 20
	m, _, _, _ := stepModel(t, stepCase{op: "diagonal", cmp: "dot", loss: "softmax", batchNegs: 10, uniform: 10}, d)
	L, R := MapTable(rows, d), MapTable(rows, d)
	defer L.Release()
	defer R.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	b := scaleBatch(rng, 100, rows, rows)
	w := NewMappedWorker(m)
	base, _ := WorkerMapped()
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	w.Step(b, L, R, rng)
	grown := int64(heap()) - int64(before)
	if len(w.gl.slot) != rows || len(w.gr.slot) != rows {
		t.Fatalf("slots of %d and %d rows, want %d", len(w.gl.slot), len(w.gr.slot), rows)
	}
	if grown > 1<<20 {
		t.Errorf("a batch on tables of %d rows grew the Go heap by %d KiB: the worker's arrays are in it", rows, grown>>10)
	}
	if now, peak := WorkerMapped(); now-base < 8<<20 || peak < now {
		t.Errorf("the worker's mappings count %d bytes (peak %d), want at least the 8 MiB of two sides' indexes", now-base, peak-base)
	}
	w.Release()
	if now, _ := WorkerMapped(); now != base {
		t.Errorf("after Release the workers map %d bytes, before %d", now, base)
	}
	if w.gl.slot != nil || w.gl.slotMem != nil || w.gr.gMem != nil || w.gl.tab != nil {
		t.Error("Release left the worker's arrays or tables")
	}
	// Usable again after Release.
	if st := w.Step(b, L, R, rng); st.Count != 100 {
		t.Errorf("after Release: trained %d edges, want 100", st.Count)
	}
	w.Release()
}
