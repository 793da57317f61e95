package model

import (
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/batchprep/batchprep/internal/kern"
)

// Table holds the embeddings of one (entity type, partition): Rows rows
// of Dim float32, and one row-wise Adagrad accumulator per row. Workers
// share it without locks (invariant 6).
type Table struct {
	Rows, Dim int
	Emb       []float32 // Rows×Dim, row-major
	Acc       []float32 // Rows

	// mapped tables (MapTable) hold their arrays' mappings until Release.
	mapped   bool
	mem      [2][]byte
	released atomic.Bool
}

// NewTable returns a table whose embeddings are initScale·N(0,1) drawn from
// rng (PBG's init_scale), with zero accumulators.
func NewTable(rows, dim int, initScale float64, rng *rand.Rand) *Table {
	t := MakeTable(rows, dim)
	t.fill(initScale, rng)
	return t
}

// fill draws every embedding value as initScale·N(0,1) from rng.
func (t *Table) fill(initScale float64, rng *rand.Rand) {
	for i := range t.Emb {
		t.Emb[i] = float32(initScale * rng.NormFloat64())
	}
}

// MakeTable returns a table of zeros, its memory advised as huge pages
// when large (see SetMemoryHints): what a reader of a stored table fills.
func MakeTable(rows, dim int) *Table {
	return &Table{Rows: rows, Dim: dim, Emb: makeHuge[float32](rows * dim), Acc: makeHuge[float32](rows)}
}

// Row returns row i of the shared memory (for single-threaded readers).
func (t *Table) Row(i int) []float32 { return t.Emb[i*t.Dim : (i+1)*t.Dim] }

// Read copies row i into dst; safe while workers update the table.
func (t *Table) Read(i int, dst []float32) { load(dst[:t.Dim], t.Row(i)) }

// Update applies one row-wise Adagrad step with gradient g to row i
// (invariant 5): acc += mean(g²); row -= lr·g/(sqrt(acc)+1e-10). scratch
// holds Dim floats.
func (t *Table) Update(i int, g []float32, lr float32, scratch []float32) {
	d := t.Dim
	g = g[:d]
	acc := load1(&t.Acc[i]) + kern.Dot(g, g)/float32(d)
	store1(&t.Acc[i], acc)
	step := lr / (float32(math.Sqrt(float64(acc))) + 1e-10)
	row := t.Row(i)
	if !raceSafe {
		kern.Axpy(-step, g, row)
		return
	}
	load(scratch[:d], row)
	kern.Axpy(-step, g, scratch[:d])
	store(row, scratch[:d])
}

// Dense is a parameter vector with element-wise Adagrad (relation
// operators, global embeddings); shared like a Table.
type Dense struct {
	P, Acc []float32
}

// NewDense returns a vector of n parameters.
func NewDense(n int) *Dense { return &Dense{P: make([]float32, n), Acc: make([]float32, n)} }

// Read copies the parameters into dst.
func (v *Dense) Read(dst []float32) { load(dst[:len(v.P)], v.P) }

// Update applies one Adagrad step: acc += g²; p -= lr·g/(sqrt(acc)+1e-10).
func (v *Dense) Update(g []float32, lr float32) {
	for k, gk := range g[:len(v.P)] {
		if gk == 0 {
			continue
		}
		acc := load1(&v.Acc[k]) + gk*gk
		store1(&v.Acc[k], acc)
		store1(&v.P[k], load1(&v.P[k])-lr*gk/(float32(math.Sqrt(float64(acc)))+1e-10))
	}
}
