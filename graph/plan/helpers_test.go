package plan

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
)

// testGraph builds an l x r MemReader with sets edge sets; bucket sizes are
// drawn in [0, maxPer], relations in [0, rels), ordinals unique per set.
func testGraph(l, r, sets, maxPer, rels int, weights bool, seed uint64) *MemReader {
	rng := rand.New(rand.NewPCG(seed, 99))
	m := &MemReader{L: l, R: r}
	for s := 0; s < sets; s++ {
		set := map[graph.Bucket]*graph.Edges{}
		ord := uint64(0)
		for i := 0; i < l; i++ {
			for j := 0; j < r; j++ {
				n := rng.IntN(maxPer + 1)
				e := &graph.Edges{}
				for k := 0; k < n; k++ {
					e.Lhs = append(e.Lhs, rng.Uint32N(1000))
					e.Rhs = append(e.Rhs, rng.Uint32N(1000))
					e.Rel = append(e.Rel, rng.Uint32N(uint32(rels)))
					e.Ordinal = append(e.Ordinal, ord)
					ord++
					if weights {
						e.Weight = append(e.Weight, rng.Float32())
					}
				}
				set[graph.Bucket{Lhs: i, Rhs: j}] = e
			}
		}
		m.Sets = append(m.Sets, set)
	}
	return m
}

func testOptions() Options {
	return Options{NumEpochs: 2, MaxEdgesPerChunk: 1 << 30, BucketOrder: "affinity", Workers: 3,
		BatchSize: 4, EvalFraction: 0.2, NumRelations: 3, Seed: 7}
}

// line renders a record compactly (ordinals, not rows), for comparisons.
func line(r *Record) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d/%d/%d (%d,%d)#%d ", r.Epoch, r.EdgeSet, r.Chunk, r.Bucket.Lhs, r.Bucket.Rhs, r.Index)
	if r.Kind == BucketRecord {
		fmt.Fprintf(&sb, "bucket n=%d holdout=%v", r.Edges, r.Ordinals(nil, r.Holdout))
	} else {
		fmt.Fprintf(&sb, "w%d b%d rel=%d %v", r.Worker, r.Batch, r.Relation, r.Ordinals(nil, r.Rows))
	}
	return sb.String()
}

// collect runs it to the end (or after maxBatches batch records) and
// returns the record lines.
func collect(t testing.TB, it *Iter, maxBatches int) []string {
	t.Helper()
	var out []string
	batches := 0
	for (maxBatches < 0 || batches < maxBatches) && it.Next() {
		r := it.Record()
		s := line(r)
		if r.Resumed {
			s += " resumed"
		}
		out = append(out, s)
		if r.Kind == BatchRecord {
			batches++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustPlan(t testing.TB, r graph.Reader, o Options) *Plan {
	t.Helper()
	p, err := New(r, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustIter(t testing.TB, p *Plan, st State) *Iter {
	t.Helper()
	it, err := p.Iter(st)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func digest(lines []string) uint64 {
	h := fnv.New64a()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return h.Sum64()
}
