package plan

import (
	"testing"

	"github.com/batchprep/batchprep/graph"
)

// Invariant 2: contiguous, covering, sizes within one; PBG's n=5, chunks=4
// case (which crashes PBG) gives 1,1,1,2.
func TestChunkRange(t *testing.T) {
	for n := 0; n < 40; n++ {
		for c := 1; c < 12; c++ {
			prev, lo, hi := 0, n, 0
			for i := 0; i < c; i++ {
				b, e := ChunkRange(n, c, i)
				if b != prev || e < b {
					t.Fatalf("n=%d c=%d chunk %d = [%d,%d)", n, c, i, b, e)
				}
				lo, hi, prev = min(lo, e-b), max(hi, e-b), e
			}
			if prev != n || hi-lo > 1 {
				t.Fatalf("n=%d c=%d: end %d, sizes %d..%d", n, c, prev, lo, hi)
			}
		}
	}
	var sizes []int
	for i := 0; i < 4; i++ {
		b, e := ChunkRange(5, 4, i)
		sizes = append(sizes, e-b)
	}
	if sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1 || sizes[3] != 2 {
		t.Fatalf("n=5 c=4: %v", sizes)
	}
	if b, e := ChunkRange(1<<40, 3, 2); e != 1<<40 || b != 2*(1<<40)/3 {
		t.Fatalf("large n: [%d,%d)", b, e)
	}
}

// num_edge_chunks unset: the largest bucket over every bucket and edge set
// decides (PBG looks only at bucket (0,0)).
func TestDerivedChunks(t *testing.T) {
	g := testGraph(2, 2, 2, 0, 1, false, 1)
	big := testGraph(1, 1, 1, 0, 1, false, 1)
	_ = big
	e := &graph.Edges{}
	for i := 0; i < 25; i++ {
		e.Lhs, e.Rhs, e.Rel, e.Ordinal = append(e.Lhs, 0), append(e.Rhs, 0), append(e.Rel, 0), append(e.Ordinal, uint64(i))
	}
	g.Sets[1][graph.Bucket{Lhs: 1, Rhs: 0}] = e
	o := testOptions()
	o.MaxEdgesPerChunk = 10
	if p := mustPlan(t, g, o); p.NumChunks() != 3 {
		t.Fatalf("derived chunks %d, want ceil(25/10) = 3", p.NumChunks())
	}
	o.NumEdgeChunks = 5
	if p := mustPlan(t, g, o); p.NumChunks() != 5 {
		t.Fatalf("set chunks %d", p.NumChunks())
	}
	if NumChunksFor(0, 10) != 1 || NumChunksFor(10, 10) != 1 || NumChunksFor(11, 10) != 2 {
		t.Fatal("NumChunksFor")
	}
}

// Our split versus PBG's split_almost_equally (pbg-notes §11): PBG gives
// 25/4 -> 7,7,7,4 and 5/4 -> 2,2,1,0; we keep sizes within one.
func TestShareRange(t *testing.T) {
	cases := []struct {
		m, w int
		want []int
	}{
		{24, 4, []int{6, 6, 6, 6}},
		{25, 4, []int{7, 6, 6, 6}},
		{23, 4, []int{6, 6, 6, 5}},
		{5, 4, []int{2, 1, 1, 1}},
		{6, 5, []int{2, 1, 1, 1, 1}},
		{2, 4, []int{1, 1, 0, 0}},
	}
	for _, c := range cases {
		prev := 0
		for w, want := range c.want {
			b, e := ShareRange(c.m, c.w, w)
			if b != prev || e-b != want {
				t.Fatalf("%d/%d worker %d: [%d,%d), want size %d", c.m, c.w, w, b, e, want)
			}
			prev = e
		}
		if prev != c.m {
			t.Fatalf("%d/%d does not cover", c.m, c.w)
		}
	}
}

func TestHoldoutCount(t *testing.T) {
	for _, c := range [][3]float64{{10, 0.1, 1}, {1000000, 0.05, 50000}, {19, 0.1, 1}, {5, 0, 0}, {7, 1, 7}} {
		if got := HoldoutCount(int(c[0]), c[1]); got != int(c[2]) {
			t.Errorf("HoldoutCount(%v, %v) = %d, want %v", c[0], c[1], got, c[2])
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := []func(*Options){
		func(o *Options) { o.Workers = 0 },
		func(o *Options) { o.BatchSize = 0 },
		func(o *Options) { o.EvalFraction = 1.5 },
		func(o *Options) { o.BucketOrder = "spiral" },
		func(o *Options) { o.NumEdgeChunks = -1 },
		func(o *Options) { o.NumEpochs = -1 },
		func(o *Options) { o.MaxEdgesPerChunk = 0 },
	}
	for i, f := range bad {
		o := testOptions()
		f(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	o := testOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}
