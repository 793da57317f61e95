package plan

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
)

type ev struct {
	rec  Record
	ords []uint64
}

// walk runs the whole plan and returns each record with its ordinals.
func walk(t *testing.T, p *Plan) []ev {
	t.Helper()
	it := mustIter(t, p, p.Start())
	var out []ev
	for it.Next() {
		r := *it.Record()
		rows := r.Rows
		if r.Kind == BucketRecord {
			rows = r.Holdout
		}
		ords := r.Ordinals(nil, rows)
		r.Rows, r.Holdout, r.Data = nil, nil, nil
		out = append(out, ev{r, ords})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Invariants 3 and 4: every epoch covers each edge exactly once, trained or
// held out; the holdout is the same in every epoch and never trained.
func TestCoverageAndHoldout(t *testing.T) {
	for _, order := range []string{"affinity", "buffer"} {
		for _, dyn := range []bool{false, true} {
			for _, chunks := range []int{0, 1, 3} {
				g := testGraph(3, 2, 2, 40, 3, true, 1)
				o := testOptions()
				o.DynamicRelations, o.NumEdgeChunks, o.NumEpochs = dyn, chunks, 3
				o.BucketOrder, o.PartitionBuffer = order, 2
				p := mustPlan(t, g, o)
				type key struct{ set, ord int }
				held := map[int]map[key]bool{}
				trained := map[int]map[key]int{}
				holdCount := map[[4]int]int{}
				for _, e := range walk(t, p) {
					r := e.rec
					if held[r.Epoch] == nil {
						held[r.Epoch], trained[r.Epoch] = map[key]bool{}, map[key]int{}
					}
					for _, x := range e.ords {
						k := key{r.EdgeSet, int(x)}
						if r.Kind == BucketRecord {
							if held[r.Epoch][k] {
								t.Fatalf("edge %v held out twice", k)
							}
							held[r.Epoch][k] = true
						} else {
							trained[r.Epoch][k]++
						}
					}
					if r.Kind == BucketRecord {
						holdCount[[4]int{r.EdgeSet, r.Chunk, r.Bucket.Lhs, r.Bucket.Rhs}] = r.Edges
						if got, want := len(e.ords), HoldoutCount(r.Edges, o.EvalFraction); got != want {
							t.Fatalf("holdout of %d edges: %d, want %d", r.Edges, got, want)
						}
					}
				}
				total := 0
				for s := range g.Sets {
					for _, e := range g.Sets[s] {
						total += e.Len()
					}
				}
				for ep := 0; ep < o.NumEpochs; ep++ {
					if len(held[ep])+len(trained[ep]) != total {
						t.Fatalf("dyn=%v chunks=%d epoch %d: %d held + %d trained, want %d edges", dyn, chunks, ep, len(held[ep]), len(trained[ep]), total)
					}
					for k, c := range trained[ep] {
						if c != 1 || held[ep][k] {
							t.Fatalf("epoch %d edge %v trained %d times, held out %v", ep, k, c, held[ep][k])
						}
					}
					if fmt.Sprint(held[ep]) != fmt.Sprint(held[0]) {
						t.Fatalf("holdout of epoch %d differs from epoch 0", ep)
					}
				}
			}
		}
	}
}

// Invariant 1: epoch > edge set > chunk > bucket, each pass a full order,
// in the order Plan.Order gives.
func TestLoopOrder(t *testing.T) {
	g := testGraph(3, 3, 2, 10, 2, false, 2)
	o := testOptions()
	o.NumEdgeChunks = 2
	p := mustPlan(t, g, o)
	var got [][5]int
	for _, e := range walk(t, p) {
		if e.rec.Kind == BucketRecord {
			r := e.rec
			got = append(got, [5]int{r.Epoch, r.EdgeSet, r.Chunk, r.Index})
			if want := p.Order(r.Epoch, r.EdgeSet, r.Chunk)[r.Index]; want != r.Bucket {
				t.Fatalf("pass %d/%d/%d index %d: bucket %v, order says %v", r.Epoch, r.EdgeSet, r.Chunk, r.Index, r.Bucket, want)
			}
		}
	}
	i := 0
	for ep := 0; ep < 2; ep++ {
		for s := 0; s < 2; s++ {
			for c := 0; c < 2; c++ {
				for b := 0; b < 9; b++ {
					if want := [5]int{ep, s, c, b}; got[i] != want {
						t.Fatalf("bucket record %d is %v, want %v", i, got[i], want)
					}
					i++
				}
			}
		}
	}
	if i != len(got) {
		t.Fatalf("%d bucket records, want %d", len(got), i)
	}
	// Orders differ between passes (a new order per epoch, set, chunk).
	if fmt.Sprint(p.Order(0, 0, 0)) == fmt.Sprint(p.Order(1, 0, 0)) && fmt.Sprint(p.Order(0, 0, 0)) == fmt.Sprint(p.Order(0, 1, 0)) {
		t.Fatal("bucket order does not change between passes")
	}
	for _, name := range bucket.Names {
		o.BucketOrder = name
		p := mustPlan(t, g, o)
		seen := map[graph.Bucket]bool{}
		for _, b := range p.Order(1, 1, 1) {
			seen[b] = true
		}
		if len(seen) != 9 {
			t.Fatalf("%s: %d distinct buckets in a pass", name, len(seen))
		}
	}
}

// Invariant 5: worker shares differ by at most one edge, first ones larger.
func TestWorkerShares(t *testing.T) {
	for _, dyn := range []bool{false, true} {
		g := testGraph(2, 2, 1, 60, 3, false, 3)
		o := testOptions()
		o.DynamicRelations, o.Workers = dyn, 4
		p := mustPlan(t, g, o)
		var cur Record
		share := make([]int, 4)
		check := func() {
			m := cur.Edges - HoldoutCount(cur.Edges, o.EvalFraction)
			for w, s := range share {
				b, e := ShareRange(m, 4, w)
				if s != e-b {
					t.Fatalf("bucket %v worker %d: %d edges, want %d (of %d)", cur.Bucket, w, s, e-b, m)
				}
			}
		}
		for _, e := range walk(t, p) {
			if e.rec.Kind == BucketRecord {
				if cur.Edges > 0 {
					check()
				}
				cur = e.rec
				clear(share)
				continue
			}
			share[e.rec.Worker] += len(e.ords)
		}
		check()
	}
}

// Invariant 6 (dynamic): contiguous batches of batch_size, the last smaller,
// relation -1; the concatenation of a worker's batches is its part of the
// shuffled order, which the relation mode then groups by relation keeping
// that order (PBG test_group_by_relation_type keeps the original order
// inside a type).
func TestBatchShapes(t *testing.T) {
	g := testGraph(2, 2, 1, 80, 3, false, 4)
	o := testOptions()
	o.NumEpochs = 1
	o.DynamicRelations = true
	dyn := walk(t, mustPlan(t, g, o))
	o.DynamicRelations = false
	grp := walk(t, mustPlan(t, g, o))
	rel := map[uint64]uint32{}
	for _, e := range g.Sets[0] {
		for i := range e.Rel {
			rel[e.Ordinal[i]] = e.Rel[i]
		}
	}
	type wk struct {
		idx, w int
	}
	parts := map[wk][]uint64{}
	sizes := map[wk][]int{}
	for _, e := range dyn {
		if e.rec.Kind == BatchRecord {
			k := wk{e.rec.Index, e.rec.Worker}
			if e.rec.Relation != -1 {
				t.Fatalf("dynamic batch with relation %d", e.rec.Relation)
			}
			if e.rec.Batch != len(sizes[k]) {
				t.Fatalf("batch numbers not consecutive")
			}
			parts[k] = append(parts[k], e.ords...)
			sizes[k] = append(sizes[k], len(e.ords))
		}
	}
	for k, s := range sizes {
		for i, n := range s {
			if i < len(s)-1 && n != o.BatchSize || n < 1 || n > o.BatchSize {
				t.Fatalf("worker %v batch sizes %v", k, s)
			}
		}
	}
	byRel := map[wk]map[uint32][]uint64{}
	for _, e := range grp {
		if e.rec.Kind != BatchRecord {
			continue
		}
		k := wk{e.rec.Index, e.rec.Worker}
		if byRel[k] == nil {
			byRel[k] = map[uint32][]uint64{}
		}
		r := uint32(e.rec.Relation)
		if len(e.ords) < 1 || len(e.ords) > o.BatchSize {
			t.Fatalf("batch of %d edges", len(e.ords))
		}
		for _, x := range e.ords {
			if rel[x] != r {
				t.Fatalf("batch of relation %d holds edge %d of relation %d", r, x, rel[x])
			}
		}
		byRel[k][r] = append(byRel[k][r], e.ords...)
	}
	for k, part := range parts {
		want := map[uint32][]uint64{}
		for _, x := range part {
			want[rel[x]] = append(want[rel[x]], x)
		}
		if fmt.Sprint(want) != fmt.Sprint(byRel[k]) {
			t.Fatalf("worker %v: grouped batches %v, want the shuffled part by relation %v", k, byRel[k], want)
		}
	}
}

// Invariant 7: same seed, same plan; another seed, another plan; GOMAXPROCS
// 1 and 4 agree, on buckets large enough for the blocked parallel shuffle.
func TestDeterminism(t *testing.T) {
	defer func(old int) { blockTarget = old }(blockTarget)
	blockTarget = 1 << 10
	g := testGraph(3, 2, 1, 6000, 4, false, 5)
	o := testOptions()
	o.NumEpochs, o.BatchSize, o.Workers, o.NumRelations = 1, 1000, 2, 4
	multi := false
	for _, e := range g.Sets[0] {
		multi = multi || numBlocks(e.Len()-HoldoutCount(e.Len(), o.EvalFraction)) > 1
	}
	if !multi {
		t.Fatal("no bucket large enough for the blocked shuffle")
	}
	o.BucketOrder, o.PartitionBuffer = "buffer", 3
	run := func(procs int, seed uint64) uint64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		o.Seed = seed
		return digest(collect(t, mustIter(t, mustPlan(t, g, o), mustPlan(t, g, o).Start()), -1))
	}
	a, b, c := run(1, 7), run(4, 7), run(4, 8)
	if a != b {
		t.Fatal("GOMAXPROCS 1 and 4 give different plans")
	}
	if a == c {
		t.Fatal("seeds 7 and 8 give the same plan")
	}
	if run(2, 7) != a {
		t.Fatal("same seed, different plan")
	}
}

func TestEmptyAndTiny(t *testing.T) {
	g := &MemReader{L: 1, R: 1, Sets: []map[graph.Bucket]*graph.Edges{{}}}
	o := testOptions()
	lines := collect(t, mustIter(t, mustPlan(t, g, o), mustPlan(t, g, o).Start()), -1)
	if len(lines) != 2 { // one empty bucket per epoch
		t.Fatalf("empty graph: %v", lines)
	}
	o.NumEpochs = 0
	if lines := collect(t, mustIter(t, mustPlan(t, g, o), mustPlan(t, g, o).Start()), -1); len(lines) != 0 {
		t.Fatalf("0 epochs: %v", lines)
	}
}

func TestBadRelation(t *testing.T) {
	g := testGraph(1, 1, 1, 20, 3, false, 6)
	o := testOptions()
	o.NumRelations = 2
	it := mustIter(t, mustPlan(t, g, o), mustPlan(t, g, o).Start())
	for it.Next() {
	}
	if it.Err() == nil {
		t.Fatal("relation id beyond the config's relations accepted")
	}
}

// PBG's TestIterationManager (pbg-notes §11): 2 epochs x 3 edge sets x 4
// chunks run the passes in product(range(2), range(3), range(4)) order;
// starting at the last pass (PBG's test_partial, iteration (1*3+2)*4+3)
// yields only pass (1, 2, 3).
func TestIterationOrderPBG(t *testing.T) {
	g := testGraph(1, 1, 3, 8, 2, false, 12)
	o := testOptions()
	o.NumEdgeChunks = 4
	p := mustPlan(t, g, o)
	var passes [][3]int
	for _, e := range walk(t, p) {
		if e.rec.Kind == BucketRecord {
			passes = append(passes, [3]int{e.rec.Epoch, e.rec.EdgeSet, e.rec.Chunk})
		}
	}
	i := 0
	for ep := 0; ep < 2; ep++ {
		for s := 0; s < 3; s++ {
			for c := 0; c < 4; c++ {
				if passes[i] != [3]int{ep, s, c} {
					t.Fatalf("pass %d is %v, want %v", i, passes[i], [3]int{ep, s, c})
				}
				i++
			}
		}
	}
	st := p.Start()
	st.Position = Position{Epoch: 1, EdgeSet: 2, Chunk: 3}
	it := mustIter(t, p, st)
	for it.Next() {
		if r := it.Record(); r.Epoch != 1 || r.EdgeSet != 2 || r.Chunk != 3 {
			t.Fatalf("after the last pass's start: record of pass %d/%d/%d", r.Epoch, r.EdgeSet, r.Chunk)
		}
	}
	if it.Err() != nil || it.State().Position.Epoch != 2 {
		t.Fatalf("end: %v %+v", it.Err(), it.State().Position)
	}
}

// Memory (package doc): yielding batch records allocates nothing; the
// per-edge buffers are sized once, for the largest chunk.
func TestNoAllocationPerBatch(t *testing.T) {
	g := testGraph(1, 1, 1, 3000, 3, true, 5)
	o := testOptions()
	o.BatchSize = 10
	p := mustPlan(t, g, o)
	it := mustIter(t, p, p.Start())
	if !it.Next() || it.Record().Kind != BucketRecord || it.Record().Edges < 1000 {
		t.Fatalf("want a first bucket of at least 1000 edges: %v", it.Err())
	}
	mem := it.MemoryBytes()
	n := 0
	a := testing.AllocsPerRun(50, func() {
		if it.Next() && it.Record().Kind == BatchRecord {
			n++
		}
	})
	if a != 0 || n != 51 {
		t.Errorf("%v allocations per batch record (%d of 51 calls were batches)", a, n)
	}
	for it.Next() {
	}
	if it.Err() != nil || it.MemoryBytes() != mem {
		t.Errorf("%v; buffers went from %d to %d bytes after the first chunk", it.Err(), mem, it.MemoryBytes())
	}
}
