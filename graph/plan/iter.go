package plan

import (
	"fmt"
	"sync"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/mix"
	"github.com/batchprep/batchprep/internal/plural"
)

// Kind tells a bucket record from a batch record.
type Kind int

const (
	BucketRecord Kind = iota // a bucket starts (or resumes)
	BatchRecord              // one batch of one worker
)

// Record is one step of the plan. Slices point into the iterator's buffers
// and are valid until the next call to Next.
type Record struct {
	Kind                  Kind
	Epoch, EdgeSet, Chunk int
	Bucket                graph.Bucket
	Index                 int // place of Bucket in this pass's order

	// Bucket records.
	Edges   int      // edges in this bucket's chunk, before the holdout
	Holdout []uint32 // rows of the held-out edges, ascending
	Resumed bool     // announced again after a resume mid-bucket

	// Batch records.
	Worker, Batch int
	Relation      int      // -1 in dynamic mode
	Rows          []uint32 // rows of the batch's edges in Data

	// Data holds the chunk's columns; rows index it.
	Data *graph.Edges
}

// Ordinals appends the ordinals of rows (Holdout or Rows) to dst.
func (r *Record) Ordinals(dst []uint64, rows []uint32) []uint64 {
	for _, x := range rows {
		dst = append(dst, r.Data.Ordinal[x])
	}
	return dst
}

// Iter walks a plan. It is not safe for concurrent use (it runs the
// workers' batching concurrently itself).
type Iter struct {
	p   *Plan
	pos Position // the bucket being yielded or to be entered; next (worker, batch)
	in  bool     // the current bucket's record was yielded
	err error

	order    []graph.Bucket
	orderFor [3]int
	edges    graph.Edges
	perm     []uint32 // training rows (shuffled), then holdout rows
	scratch  []uint32 // holdout bitmap, then the rows grouped by relation
	rows     []uint32 // what batch offsets index: scratch, or perm in dynamic mode
	m        int      // training edges in the current bucket
	shuffle  blockShuffle
	rel      relPhase
	workers  []workerState
	rec      Record
}

type workerState struct {
	batches []batch
	counts  []int
}

// Iter returns an iterator starting at st (from Start, or a restored state).
// A state whose fingerprint differs from the plan's is refused, naming each
// differing field; a position outside the plan is an error (ErrState).
func (p *Plan) Iter(st State) (*Iter, error) {
	if st.Version != StateVersion {
		return nil, fmt.Errorf("%w: version %d", ErrState, st.Version)
	}
	if err := st.Fingerprint.Diff(p.Fingerprint()); err != nil {
		return nil, err
	}
	pos := st.Position
	if pos.EdgeSet >= p.sets || pos.Chunk >= p.chunks || pos.Index >= p.l*p.rr || pos.Worker >= p.opts.Workers {
		return nil, fmt.Errorf("%w: position %v outside the plan (%s, %s, %s, %s)", ErrState, pos,
			plural.Count(p.sets, "edge set"), plural.Count(p.chunks, "chunk"), plural.Count(p.l*p.rr, "bucket"), plural.Count(p.opts.Workers, "worker"))
	}
	it := &Iter{p: p, pos: pos, orderFor: [3]int{-1, -1, -1}, workers: make([]workerState, p.opts.Workers)}
	return it, nil
}

// MemoryBytes is the size of the per-edge buffers the iterator holds (the
// chunk's columns and the two index arrays), by capacity.
func (it *Iter) MemoryBytes() int64 {
	e := &it.edges
	return int64(cap(e.Lhs)+cap(e.Rhs)+cap(e.Rel)+cap(e.Weight)+cap(it.perm)+cap(it.scratch))*4 + int64(cap(e.Ordinal))*8
}

// Err returns the error that ended the iteration, if any.
func (it *Iter) Err() error { return it.err }

// Record returns the record of the last successful Next.
func (it *Iter) Record() *Record { return &it.rec }

// Next moves to the next record; false at the end of the plan or on error.
func (it *Iter) Next() bool {
	if it.err != nil {
		return false
	}
	for {
		if !it.in {
			if it.pos.Epoch >= it.p.opts.NumEpochs {
				return false
			}
			if err := it.enter(); err != nil {
				it.err = err
				return false
			}
			return true
		}
		w, b := it.pos.Worker, it.pos.Batch
		for w < len(it.workers) && b >= len(it.workers[w].batches) {
			w, b = w+1, 0
		}
		if w == len(it.workers) {
			it.nextBucket()
			continue
		}
		bt := it.workers[w].batches[b]
		it.rec.Kind, it.rec.Worker, it.rec.Batch = BatchRecord, w, b
		it.rec.Relation, it.rec.Holdout, it.rec.Resumed = int(bt.rel), nil, false
		it.rec.Rows = it.rows[bt.off : bt.off+bt.n]
		it.pos.Worker, it.pos.Batch = w, b+1
		return true
	}
}

// State returns the state after the last record: restoring it continues
// with the record that the next Next would yield.
func (it *Iter) State() State {
	pos := it.pos
	if it.in {
		w, b := pos.Worker, pos.Batch
		for w < len(it.workers) && b >= len(it.workers[w].batches) {
			w, b = w+1, 0
		}
		if w == len(it.workers) {
			pos = it.p.advance(pos)
		} else {
			pos.Worker, pos.Batch = w, b
		}
	}
	return State{Version: StateVersion, Position: pos, Fingerprint: it.p.Fingerprint()}
}

// advance returns the position of the bucket after pos's.
func (p *Plan) advance(pos Position) Position {
	pos.Worker, pos.Batch = 0, 0
	if pos.Index++; pos.Index < p.l*p.rr {
		return pos
	}
	pos.Index = 0
	if pos.Chunk++; pos.Chunk < p.chunks {
		return pos
	}
	pos.Chunk = 0
	if pos.EdgeSet++; pos.EdgeSet < p.sets {
		return pos
	}
	pos.EdgeSet = 0
	pos.Epoch++
	return pos
}

func (it *Iter) nextBucket() {
	it.pos = it.p.advance(it.pos)
	it.in = false
}

// enter prepares the bucket at it.pos and yields its record.
func (it *Iter) enter() error {
	p, pos := it.p, it.pos
	if key := [3]int{pos.Epoch, pos.EdgeSet, pos.Chunk}; key != it.orderFor {
		it.order, it.orderFor = p.Order(pos.Epoch, pos.EdgeSet, pos.Chunk), key
	}
	b := it.order[pos.Index]
	cn, err := it.load(b)
	if err != nil {
		return err
	}
	resumed := pos.Worker != 0 || pos.Batch != 0
	if resumed {
		if w := it.workers[pos.Worker]; pos.Batch >= len(w.batches) {
			return fmt.Errorf("%w: position %v: worker %d has only %s in this bucket", ErrState, pos, pos.Worker, plural.Count(len(w.batches), "batch", "batches"))
		}
	}
	it.in = true
	it.rec = Record{Kind: BucketRecord, Epoch: pos.Epoch, EdgeSet: pos.EdgeSet, Chunk: pos.Chunk,
		Bucket: b, Index: pos.Index, Edges: cn, Holdout: it.perm[it.m:cn], Resumed: resumed, Data: &it.edges}
	return nil
}

// load reads bucket b's chunk at it.pos (epoch, set, chunk) and prepares it:
// holdout, shuffle, shares and every worker's batches. It returns the
// chunk's size before the holdout.
func (it *Iter) load(b graph.Bucket) (int, error) {
	p, pos := it.p, it.pos
	n, err := p.r.NumEdges(p.src[pos.EdgeSet], b)
	if err != nil {
		return 0, fmt.Errorf("plan: edge set %d bucket (%d,%d): %w", pos.EdgeSet, b.Lhs, b.Rhs, err)
	}
	begin, end := ChunkRange(n, p.chunks, pos.Chunk)
	cn := end - begin
	it.reserve(cn)
	// The holdout and the shuffle's first pass (the whole shuffle in
	// dynamic mode) depend only on the chunk's size and coordinates: on
	// large chunks they run while the chunk loads, in buffers the load does
	// not touch.
	it.perm, it.scratch = it.perm[:cn], it.scratch[:cn]
	it.m = cn - HoldoutCount(cn, p.opts.EvalFraction)
	var held sync.WaitGroup
	if cn >= concurrentHoldout {
		held.Go(func() { it.beforeLoad(b) })
	} else {
		it.beforeLoad(b)
	}
	it.edges.Reset()
	it.rel = relPhase{}
	if rf, ok := p.r.(RelationFirstReader); ok && !p.opts.DynamicRelations {
		// The relation check and the shuffle's second pass run as soon as
		// the relation column is in, while the other columns load.
		err = rf.ReadEdgesRelationFirst(p.src[pos.EdgeSet], b, begin, end, &it.edges, func() {
			held.Wait()
			if len(it.edges.Rel) == cn { // else the length check below fails
				it.relations()
			}
		})
	} else {
		err = p.r.ReadEdges(p.src[pos.EdgeSet], b, begin, end, &it.edges)
	}
	held.Wait()
	if err != nil {
		return 0, fmt.Errorf("plan: edge set %d bucket (%d,%d) chunk %d: %w", pos.EdgeSet, b.Lhs, b.Rhs, pos.Chunk, err)
	}
	if it.edges.Len() != end-begin {
		return 0, fmt.Errorf("plan: edge set %d bucket (%d,%d): read %d edges, want %d", pos.EdgeSet, b.Lhs, b.Rhs, it.edges.Len(), end-begin)
	}
	if w := it.edges.Weight; w != nil && cap(w) > it.p.maxChunk {
		it.edges.Weight = append(make([]float32, 0, it.p.maxChunk), w...)
	}
	if err := it.prepare(b); err != nil {
		return 0, err
	}
	return cn, nil
}

// reserve sizes the buffers, once, for the plan's largest chunk, so that
// they never grow by append's over-allocation. The weight column, known only
// after a read, is sized when it first appears.
func (it *Iter) reserve(n int) {
	e := &it.edges
	size := max(n, it.p.maxChunk)
	if cap(e.Rel) < n {
		e.Lhs, e.Rhs, e.Rel = make([]uint32, 0, size), make([]uint32, 0, size), make([]uint32, 0, size)
		e.Ordinal = make([]uint64, 0, size)
	}
	if e.Weight != nil && cap(e.Weight) < n {
		e.Weight = make([]float32, 0, size)
	}
	if cap(it.perm) < n {
		it.perm, it.scratch = make([]uint32, size), make([]uint32, size)
	}
}

// concurrentHoldout is the chunk size from which the holdout and the
// shuffle's first pass run on their own goroutine while the chunk loads.
const concurrentHoldout = 1 << 16

// beforeLoad does the work that needs no column of the chunk at it.pos
// (it.perm and it.scratch sliced to the chunk's size first): it marks the
// held-out positions in the bitmap at the start of it.scratch, lists them,
// ascending, in it.perm[it.m:], and makes the shuffle's first pass; in
// dynamic mode, the whole shuffle.
func (it *Iter) beforeLoad(b graph.Bucket) {
	n, pos, o := len(it.perm), it.pos, &it.p.opts
	var marks []uint32
	if it.m < n {
		marks = it.scratch[:(n+31)/32]
		clear(marks)
		sampleHoldout(marks, n, n-it.m, mix.Rand(o.Seed, tagHoldout, uint64(pos.EdgeSet), uint64(pos.Chunk), uint64(b.Lhs), uint64(b.Rhs)))
		listMarked(it.perm[it.m:], marks, n)
	}
	c := coords{uint64(pos.Epoch), uint64(pos.EdgeSet), uint64(pos.Chunk), uint64(b.Lhs), uint64(b.Rhs)}
	it.shuffle.init(n, it.m, o.Seed, c)
	it.shuffle.count(marks, parallelism())
	if o.DynamicRelations {
		it.shuffle.place(it.perm[:it.m], marks, parallelism(), nil)
	}
}

// maxRelation returns the largest relation id of rel (0 when empty),
// scanning blocks of it in parallel.
func maxRelation(rel []uint32) uint32 {
	const block = 1 << 20
	parts := (len(rel) + block - 1) / block
	var maxes [64]uint32
	if parts > len(maxes) {
		parts = len(maxes)
	}
	per := (len(rel) + max(parts, 1) - 1) / max(parts, 1)
	parallelFor(parts, parallelism(), func(i int) {
		m := uint32(0)
		for _, r := range rel[i*per : min(len(rel), (i+1)*per)] {
			m = max(m, r)
		}
		maxes[i] = m
	})
	m := uint32(0)
	for _, x := range maxes[:parts] {
		m = max(m, x)
	}
	return m
}

// RelationFirstReader is implemented by readers that can hand over the
// relation column before the others (edgestore.Store): the iterator then
// checks the relations and completes the shuffle while the rest loads.
// relReady runs at most once, before ReadEdgesRelationFirst returns, when
// dst.Rel holds the range's relation ids.
type RelationFirstReader interface {
	ReadEdgesRelationFirst(s int, b graph.Bucket, begin, end int, dst *graph.Edges, relReady func()) error
}

// relPhase is the outcome of Iter.relations for the current chunk.
type relPhase struct {
	done   bool
	bad    bool // a relation id >= Options.NumRelations
	numRel int
	pk     *packing
}

// relations checks the chunk's relation ids against the options and, in
// relation mode, packs and places the shuffled rows (the shuffle's second
// pass, after beforeLoad). It reads only the relation column.
func (it *Iter) relations() {
	o := &it.p.opts
	n := len(it.edges.Rel)
	rp := relPhase{done: true, numRel: o.NumRelations}
	if !o.DynamicRelations {
		maxRel := maxRelation(it.edges.Rel)
		if rp.numRel > 0 && n > 0 && int(maxRel) >= rp.numRel {
			rp.bad = true
			it.rel = rp
			return
		}
		if rp.numRel == 0 {
			rp.numRel = int(maxRel) + 1
		}
		var marks []uint32
		if it.m < n {
			marks = it.scratch[:(n+31)/32]
		}
		rp.pk = newPacking(it.edges.Rel, rp.numRel)
		it.shuffle.place(it.perm[:it.m], marks, parallelism(), rp.pk)
	}
	it.rel = rp
}

// prepare completes the shuffle and computes the shares and every worker's
// batches for the loaded chunk (after beforeLoad).
func (it *Iter) prepare(b graph.Bucket) error {
	pos, o := it.pos, &it.p.opts
	if !it.rel.done {
		it.relations()
	}
	if it.rel.bad {
		for i, r := range it.edges.Rel {
			if int(r) >= o.NumRelations {
				return fmt.Errorf("plan: edge set %d bucket (%d,%d) edge ordinal %d: relation %d, config has %d relations",
					pos.EdgeSet, b.Lhs, b.Rhs, it.edges.Ordinal[i], r, o.NumRelations)
			}
		}
		return fmt.Errorf("plan: edge set %d bucket (%d,%d): relation ids changed while loading", pos.EdgeSet, b.Lhs, b.Rhs)
	}
	numRel, pk := it.rel.numRel, it.rel.pk
	c := coords{uint64(pos.Epoch), uint64(pos.EdgeSet), uint64(pos.Chunk), uint64(b.Lhs), uint64(b.Rhs)}
	it.rows = it.perm
	if !o.DynamicRelations {
		it.rows = it.scratch
	}
	var wg sync.WaitGroup
	for w := range it.workers {
		ws := &it.workers[w]
		begin, end := ShareRange(it.m, o.Workers, w)
		ws.batches = ws.batches[:0]
		if o.DynamicRelations {
			ws.batches = dynamicBatches(ws.batches, begin, end, o.BatchSize)
			continue
		}
		if cap(ws.counts) < numRel {
			ws.counts = make([]int, numRel)
		}
		ws.counts = ws.counts[:numRel]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mix.Rand(o.Seed, tagRelation, c.epoch, c.set, c.chunk, c.lhs, c.rhs, uint64(w))
			ws.batches = relationBatches(ws.batches, it.perm[begin:end], it.scratch[begin:end], begin,
				it.edges.Rel, pk, ws.counts, o.BatchSize, rng)
		}()
	}
	wg.Wait()
	return nil
}
