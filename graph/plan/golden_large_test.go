package plan

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/golden"
)

// largeGraph is a 2x2 graph whose bucket (0,0) holds 1.1 M edges: at the
// real block size it takes the blocked, multi-segment shuffle (8 blocks,
// 2 segments); the other buckets are small (one block).
func largeGraph() *MemReader {
	rng := rand.New(rand.NewPCG(5, 6))
	set := map[graph.Bucket]*graph.Edges{}
	ord := uint64(0)
	for i, n := range []int{1_100_000, 700, 0, 5000} {
		e := &graph.Edges{}
		for k := 0; k < n; k++ {
			e.Lhs = append(e.Lhs, rng.Uint32N(1000))
			e.Rhs = append(e.Rhs, rng.Uint32N(1000))
			e.Rel = append(e.Rel, rng.Uint32N(5))
			e.Ordinal = append(e.Ordinal, ord)
			ord++
		}
		set[graph.Bucket{Lhs: i / 2, Rhs: i % 2}] = e
	}
	return &MemReader{L: 2, R: 2, Sets: []map[graph.Bucket]*graph.Edges{set}}
}

// planDigest hashes every record of a whole plan: kind, coordinates,
// worker, batch, relation and the ordinals of the holdout or batch rows.
func planDigest(t testing.TB, it *Iter) string {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); h.Write(b[:]) }
	records := 0
	for it.Next() {
		r := it.Record()
		records++
		for _, v := range []int{int(r.Kind), r.Epoch, r.EdgeSet, r.Chunk, r.Bucket.Lhs, r.Bucket.Rhs, r.Index, r.Edges, r.Worker, r.Batch, r.Relation} {
			put(uint64(v))
		}
		rows := r.Rows
		if r.Kind == BucketRecord {
			rows = r.Holdout
		}
		put(uint64(len(rows)))
		for _, x := range rows {
			put(r.Data.Ordinal[x])
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d records %016x", records, h.Sum64())
}

// Invariant 7: pins the plan of a graph large enough for the blocked,
// parallel shuffle at the real block size (TestGolden's graph takes the
// single-block path), in both batching modes; a faster implementation must
// give bit-identical records.
func TestGoldenLarge(t *testing.T) {
	if blockTarget != 1<<17 {
		t.Fatalf("blockTarget is %d; this golden pins 1<<17", blockTarget)
	}
	g := largeGraph()
	var sb strings.Builder
	for _, dyn := range []bool{false, true} {
		o := Options{NumEpochs: 1, MaxEdgesPerChunk: 1 << 30, BucketOrder: "random", Workers: 3,
			BatchSize: 100, EvalFraction: 0.05, DynamicRelations: dyn, NumRelations: 5, Seed: 3}
		p := mustPlan(t, g, o)
		fmt.Fprintf(&sb, "dynamic=%v %s\n", dyn, planDigest(t, mustIter(t, p, p.Start())))
	}
	golden.Check(t, "plan-large.golden", sb.String())
}
