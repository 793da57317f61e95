package train

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/plan"
)

// Buffer negatives: at every bucket of a pass, the pools the workers draw
// uniform negatives from hold every resident partition of the type (the
// buffer's content, up to 4 here), the bucket's own among them, as the
// tables the trainer holds; with negatives = "bucket", no pool (each side
// draws from its own partition, PBG's rule).
func TestNegativePoolsHoldEveryResidentPartition(t *testing.T) {
	for _, neg := range []string{"buffer", "bucket"} {
		tr := ringTrainer(t, 120, 6, fmt.Sprintf("bucket_order = \"buffer\"\npartition_buffer = 4\nnegatives = %q\n", neg))
		full := 0
		walkPass(t, tr, func(b graph.Bucket) {
			pools := tr.negativePools()
			if neg == "bucket" {
				if pools != nil {
					t.Fatalf("negatives = bucket: pools %v", pools)
				}
				return
			}
			keys := tr.res.keys()
			if len(pools) != 1 || len(pools[0].Tabs) != len(keys) || len(tr.tables) != len(keys) {
				t.Fatalf("bucket %v: %d resident partitions, %d tables held, pools %v", b, len(keys), len(tr.tables), pools)
			}
			for i, k := range keys {
				if pools[0].Tabs[i] != tr.tables[k] || tr.tables[k] == nil {
					t.Fatalf("bucket %v: pool table %d is not resident partition %v", b, i, k)
				}
			}
			for _, k := range tr.needed(b) {
				if !tr.res.has(k) {
					t.Fatalf("bucket %v: its partition %v is not resident", b, k)
				}
			}
			if len(keys) == 4 {
				full++
			}
		})
		if neg == "buffer" && full < 10 {
			t.Fatalf("%d buckets with a full buffer of 4", full)
		}
	}
}

// Degree negatives (negatives = "buffer_degree"): every entity's degree is
// the number of training edges it is an endpoint of, held-out edges not
// counted; at every bucket the pools carry one degree sampler per
// resident partition, of that partition's degrees, and the trainer keeps
// the samplers of resident partitions only.
func TestDegreeNegativesCountTrainingEdges(t *testing.T) {
	// A star and a ring: e0 is an endpoint of every star edge.
	var sb strings.Builder
	const n = 90
	for i := 1; i < n; i++ {
		fmt.Fprintf(&sb, "e0\tr\te%d\n", i)
		fmt.Fprintf(&sb, "e%d\tr\te%d\n", i, i%(n-1)+1)
	}
	const settings = "bucket_order = \"buffer\"\npartition_buffer = 3\nnegatives = \"buffer_degree\"\n"
	for _, frac := range []string{"0", "0.25"} {
		tr := edgeTrainer(t, sb.String(), 4, settings+"eval_fraction = "+frac+"\n")
		counted, err := tr.countDegrees(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The store's edges, counted directly, and the held-out ones.
		want := map[tableKey][]uint32{}
		l, r := tr.plan.Shape()
		held, stored := 0, 0
		for i := range l {
			for j := range r {
				b := graph.Bucket{Lhs: i, Rhs: j}
				k, err := tr.store.NumEdges(0, b)
				if err != nil {
					t.Fatal(err)
				}
				var e graph.Edges
				if err := tr.store.ReadEdges(0, b, 0, k, &e); err != nil {
					t.Fatal(err)
				}
				stored += k
				held += plan.HoldoutCount(k, tr.cfg.EvalFraction)
				for x := range e.Len() {
					for _, end := range [2][2]int{{i, int(e.Lhs[x])}, {j, int(e.Rhs[x])}} {
						key := tableKey{0, end[0]}
						if want[key] == nil {
							rows, _ := tr.store.EntityCount("node", end[0])
							want[key] = make([]uint32, rows)
						}
						want[key][end[1]]++
					}
				}
			}
		}
		var got, all uint64
		for k, d := range tr.degree {
			for row, x := range d {
				got += uint64(x)
				all += uint64(want[k][row])
				if x > want[k][row] {
					t.Fatalf("eval_fraction %s: partition %v row %d: degree %d > %d edges stored", frac, k, row, x, want[k][row])
				}
				if frac == "0" && x != want[k][row] {
					t.Fatalf("partition %v row %d: degree %d, want %d", k, row, x, want[k][row])
				}
			}
		}
		if stored != 2*(n-1) || all != uint64(2*stored) || got != uint64(2*(stored-held)) || counted != int64(stored-held) || (frac != "0" && held == 0) {
			t.Fatalf("eval_fraction %s: degrees sum to %d, want 2 x (%d stored - %d held out)", frac, got, stored, held)
		}
		// The pools along a pass.
		walkPass(t, tr, func(b graph.Bucket) {
			pools := tr.negativePools()
			keys := tr.res.keys()
			var sum uint64
			for _, k := range keys {
				for _, x := range tr.degree[k] {
					sum += uint64(x)
				}
			}
			if pools[0].Degrees() != sum || len(tr.samplers) != len(keys) {
				t.Fatalf("bucket %v: pool degrees %d, want %d over %v; %d samplers held", b, pools[0].Degrees(), sum, keys, len(tr.samplers))
			}
			for i, k := range keys {
				if a := tr.samplers[k]; a == nil || pools[0].Deg[i] != a || a.Len() != tr.tables[k].Rows {
					t.Fatalf("bucket %v: sampler %d is not resident partition %v's", b, i, k)
				}
			}
		})
	}
}

// walkPass admits and swaps in the buckets of tr's first pass in turn, as
// Run does, calling at with each once its partitions are resident.
func walkPass(t *testing.T, tr *Trainer, at func(b graph.Bucket)) {
	t.Helper()
	l, r := tr.plan.Shape()
	for pos := (Position{}); pos.Epoch == 0; pos = tr.advance(pos, l*r) {
		b := tr.bucketAt(pos)
		if pos.Index == 0 {
			tr.replayResidency(pos)
		} else {
			tr.admitAt(pos, b)
		}
		if err := tr.swapIn(b); err != nil {
			t.Fatal(err)
		}
		at(b)
	}
}
