package plan

import (
	"context"
	"fmt"

	"github.com/batchprep/batchprep/graph"
)

// Prepared is one bucket's chunk of one pass, ready for training: its
// columns, its held-out rows and every worker's batches, exactly those
// Iter yields for that bucket (invariant 10). It is read-only once made:
// any number of goroutines may read it, and each worker walks its own
// Share.
type Prepared struct {
	Epoch, EdgeSet, Chunk int
	Bucket                graph.Bucket

	edges   graph.Edges
	holdout []uint32
	rows    []uint32
	workers [][]batch
}

// PrepareBucket loads bucket b's chunk of pass (epoch, set, chunk) and
// prepares it as Iter would: the batches depend on these coordinates only,
// not on the bucket's place in the pass's order nor on what was prepared
// before (invariant 7), so buckets can be prepared in any order, by any
// process. It allocates the chunk's buffers afresh.
func (p *Plan) PrepareBucket(ctx context.Context, epoch, set, chunk int, b graph.Bucket) (*Prepared, error) {
	switch {
	case epoch < 0 || set < 0 || set >= p.sets || chunk < 0 || chunk >= p.chunks:
		return nil, fmt.Errorf("plan: pass (epoch %d, edge set %d, chunk %d) outside the plan (%d edge sets, %d chunks)",
			epoch, set, chunk, p.sets, p.chunks)
	case b.Lhs < 0 || b.Lhs >= p.l || b.Rhs < 0 || b.Rhs >= p.rr:
		return nil, fmt.Errorf("plan: bucket (%d,%d) outside %dx%d partitions", b.Lhs, b.Rhs, p.l, p.rr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	it := &Iter{p: p, pos: Position{Epoch: epoch, EdgeSet: set, Chunk: chunk},
		orderFor: [3]int{-1, -1, -1}, workers: make([]workerState, p.opts.Workers)}
	cn, err := it.load(b)
	if err != nil {
		return nil, err
	}
	pb := &Prepared{Epoch: epoch, EdgeSet: set, Chunk: chunk, Bucket: b, edges: it.edges,
		holdout: it.perm[it.m:cn], rows: it.rows, workers: make([][]batch, len(it.workers))}
	for w := range it.workers {
		pb.workers[w] = it.workers[w].batches
	}
	return pb, nil
}

// Data returns the chunk's columns; the rows of Holdout and of every Batch
// index them. The caller must not modify them.
func (pb *Prepared) Data() *graph.Edges { return &pb.edges }

// NumEdges is the number of edges in the chunk, before the holdout.
func (pb *Prepared) NumEdges() int { return pb.edges.Len() }

// Holdout returns the rows of the held-out edges, ascending (invariant 3).
func (pb *Prepared) Holdout() []uint32 { return pb.holdout }

// Workers is the number of shares.
func (pb *Prepared) Workers() int { return len(pb.workers) }

// NumBatches is the number of batches in worker w's share.
func (pb *Prepared) NumBatches(w int) int { return len(pb.workers[w]) }

// Share returns a cursor over worker w's batches, starting at its first.
// Shares of one Prepared may be walked concurrently, one goroutine each.
func (pb *Prepared) Share(w int) *Share { return &Share{pb: pb, w: w} }

// Batch is one batch of a worker's share.
type Batch struct {
	Worker, Index int      // the worker and the batch's place in its share
	Relation      int      // -1 in dynamic mode
	Rows          []uint32 // rows of the batch's edges in Prepared.Data
}

// Share walks one worker's batches in order. It is not safe for concurrent
// use; different Shares are independent.
type Share struct {
	pb   *Prepared
	w, i int
}

// Next returns the next batch, or false after the last one.
func (s *Share) Next() (Batch, bool) {
	bs := s.pb.workers[s.w]
	if s.i >= len(bs) {
		return Batch{}, false
	}
	bt := bs[s.i]
	s.i++
	return Batch{Worker: s.w, Index: s.i - 1, Relation: int(bt.rel), Rows: s.pb.rows[bt.off : bt.off+bt.n]}, true
}

// Seek makes the next batch batch i of the share (a resumed trainer skips
// what it already trained); i past the end ends the share.
func (s *Share) Seek(i int) { s.i = max(i, 0) }
