package train

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
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
		walkPass(t, tr, func(_ Position, b graph.Bucket) {
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
// resident partition, of that partition's degree weights (the degrees to
// degree_exponent's power; the exponent 1 with the holdout, the default
// without), and the trainer keeps the samplers of resident partitions only.
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
		exponent := ""
		if frac != "0" {
			exponent = "degree_exponent = 1.0\n"
		}
		tr := edgeTrainer(t, sb.String(), 4, settings+exponent+"eval_fraction = "+frac+"\n")
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
		walkPass(t, tr, func(_ Position, b graph.Bucket) {
			pools := tr.negativePools()
			keys := tr.res.keys()
			var sum uint64
			for _, k := range keys {
				for _, x := range degreeWeights(tr.degree[k], tr.cfg.DegreePower()) {
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
func walkPass(t *testing.T, tr *Trainer, at func(pos Position, b graph.Bucket)) {
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
		at(pos, b)
	}
}

// Degree weights: the exponent 1 keeps the degrees; every other power is
// within one of d^e scaled (2^8, 2^8, 2^7 for 0.5, 0.25, 0.75), never
// decreasing, 0 for a degree of 0 and at least 128 for any other; and the
// values are fixed (the same on every machine: these were computed once).
func TestDegreeWeights(t *testing.T) {
	d := []uint32{0, 1, 2, 3, 4, 5, 7, 10, 99, 100, 1000, 65535, 65536, 1<<24 + 1, 123456789, math.MaxUint32 - 1, math.MaxUint32}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		d = append(d, uint32(rng.Uint64N(1<<uint(rng.IntN(33)))))
	}
	slices.Sort(d)
	if w := degreeWeights(d, 1); &w[0] != &d[0] {
		t.Fatal("exponent 1: the degrees are not used as they are")
	}
	golden := map[float64][]uint32{}
	for _, e := range []float64{0.5, 0.25, 0.75} {
		w := degreeWeights(d, e)
		scale := map[float64]float64{0.5: 256, 0.25: 256, 0.75: 128}[e]
		for i, x := range d {
			exact := new(big.Float).SetPrec(200).SetUint64(uint64(x))
			r := new(big.Float).SetPrec(200).Sqrt(exact)
			switch e {
			case 0.25:
				r.Sqrt(r)
			case 0.75:
				r.Mul(r, new(big.Float).SetPrec(200).Sqrt(r))
			}
			r.Mul(r, big.NewFloat(scale))
			want, _ := r.Float64()
			if math.Abs(float64(w[i])-math.Floor(want)) > 1 {
				t.Fatalf("exponent %v: degree %d weighs %d, want %v", e, x, w[i], want)
			}
			if i > 0 && w[i] < w[i-1] || x == 0 && w[i] != 0 || x > 0 && w[i] < 128 {
				t.Fatalf("exponent %v: degree %d weighs %d (degree %d: %d)", e, x, w[i], d[max(i-1, 0)], w[max(i-1, 0)])
			}
		}
		golden[e] = degreeWeights([]uint32{1, 2, 3, 10, 1000, math.MaxUint32}, e)
	}
	want := map[float64][]uint32{
		0.5:  {256, 362, 443, 809, 8095, 16777215},
		0.25: {256, 304, 336, 455, 1439, 65535},
		0.75: {128, 215, 291, 719, 22761, 2147483647},
	}
	for e, w := range want {
		if !slices.Equal(golden[e], w) {
			t.Errorf("exponent %v: weights %v, want %v", e, golden[e], w)
		}
	}
}

// A partition whose degree weights would overflow the alias table's
// arithmetic is refused before training, not sampled wrong.
func TestDegreeTotalChecked(t *testing.T) {
	d := make([]uint32, 1<<16+1) // (2^16+1)^2 x (2^32-1) > 2^64
	for i := range d {
		d[i] = math.MaxUint32
	}
	if err := checkDegreeTotal(d, 1); err == nil || !strings.Contains(err.Error(), "65537 entities") {
		t.Fatalf("exponent 1: %v", err)
	}
	if err := checkDegreeTotal(d, 0.5); err != nil {
		t.Fatalf("exponent 0.5 (weights of 2^24): %v", err)
	}
	if err := checkDegreeTotal(d[:1<<15], 1); err != nil {
		t.Fatalf("exponent 1, 2^15 rows: %v", err)
	}
}

// Residency balance: with degree negatives, each resident partition's
// draws weigh (most << 8) / n, n the buckets of the pass it is resident
// for (counted here along the pass as Run admits them). With c = P the
// first pass fills the buffer, so its partitions are weighted too.
func TestResidencyBalance(t *testing.T) {
	for _, c := range []int{4, 6} {
		tr := ringTrainer(t, 120, 6, fmt.Sprintf("bucket_order = \"buffer\"\npartition_buffer = %d\nnegatives = \"buffer_degree\"\neval_fraction = 0\n", c))
		if _, err := tr.countDegrees(context.Background()); err != nil {
			t.Fatal(err)
		}
		counts := map[tableKey]uint64{}
		walkPass(t, tr, func(Position, graph.Bucket) {
			for _, k := range tr.res.keys() {
				counts[k]++
			}
		})
		var most uint64
		for _, n := range counts {
			most = max(most, n)
		}
		weighted := 0
		walkPass(t, tr, func(pos Position, b graph.Bucket) {
			pools := tr.negativePools()
			tr.balancePools(pools, pos)
			if pools[0].Weight == nil {
				return // the buffer's partitions are resident equally long
			}
			weighted++
			for i, k := range tr.res.keys() {
				if want := (most << 8) / counts[k]; pools[0].Weight[i] != want {
					t.Fatalf("bucket %v: partition %v weighs %d, want %d (resident for %d of the pass's buckets, most %d)", b, k, pools[0].Weight[i], want, counts[k], most)
				}
			}
		})
		if weighted == 0 {
			t.Fatalf("c = %d of 6: no pool weighted", c)
		}
	}
}
