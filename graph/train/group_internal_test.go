package train

import (
	"context"
	"slices"
	"testing"

	"github.com/batchprep/batchprep/graph/plan"
)

// interleave_buckets: over a pass of the buffer order (P = 6, c = 4),
// the groups cut the pass into consecutive runs that cover every bucket
// once; every bucket of a group has its partitions resident when the
// group starts; a group never spans a chunk; several groups hold more
// than one bucket. Without the key every group is one
// bucket (PBG's rule).
func TestGroupsCoverThePass(t *testing.T) {
	for _, interleave := range []bool{true, false} {
		extra := "bucket_order = \"buffer\"\npartition_buffer = 4\nnegatives = \"buffer\"\nnum_edge_chunks = 2\n"
		if interleave {
			extra += "interleave_buckets = true\n"
		}
		tr := ringTrainer(t, 600, 6, extra)
		l, r := tr.plan.Shape()
		var covered []Position
		multi, longest := 0, 0
		for pos := (Position{}); pos.Epoch == 0; {
			if pos == (Position{}) {
				tr.replayResidency(pos)
			}
			g := tr.groupAt(pos)
			if g[0] != pos {
				t.Fatalf("group at %v starts at %v", pos, g[0])
			}
			for _, p := range g {
				for _, k := range tr.needed(tr.bucketAt(p)) {
					if !tr.res.has(k) {
						t.Fatalf("group at %v: bucket %v's partition %v is not resident", pos, tr.bucketAt(p), k)
					}
				}
				if p.Chunk != pos.Chunk || p.EdgeSet != pos.EdgeSet {
					t.Fatalf("group at %v spans chunks: %v", pos, p)
				}
			}
			covered = append(covered, g...)
			if len(g) > 1 {
				multi++
			}
			longest = max(longest, len(g))
			// The loop's admissions for the positions after the group.
			for _, p := range g[1:] {
				tr.admitAt(p, tr.bucketAt(p))
			}
			pos = tr.advance(g[len(g)-1], l*r)
			if pos.Epoch == 0 {
				tr.admitAt(pos, tr.bucketAt(pos))
			}
		}
		want := []Position{}
		for p := (Position{}); p.Epoch == 0; p = tr.advance(p, l*r) {
			want = append(want, p)
		}
		if !slices.Equal(covered, want) {
			t.Fatalf("interleave %v: the groups cover %d positions, the pass has %d", interleave, len(covered), len(want))
		}
		if interleave && (multi < 4 || longest < 4) {
			t.Errorf("%d groups of more than one bucket, the longest %d: want several", multi, longest)
		}
		if !interleave && multi != 0 {
			t.Errorf("without interleave_buckets: %d groups of more than one bucket", multi)
		}
		t.Logf("interleave %v: %d positions, %d groups of several buckets, the longest %d", interleave, len(want), multi, longest)
	}
}

// A group's batch order: each worker steps through exactly its shares of
// the group's buckets, each share in its own order, the buckets mixed
// (not one after the other), and the same order for the same position.
func TestGroupOrderInterleaves(t *testing.T) {
	tr := ringTrainer(t, 2000, 2, "batch_size = 50\ninterleave_buckets = true\n")
	l, r := tr.plan.Shape()
	var ps []Position
	var pbs []*plan.Prepared
	for p := (Position{}); p.Epoch == 0; p = tr.advance(p, l*r) {
		pb, err := tr.plan.PrepareBucket(context.Background(), p.Epoch, p.EdgeSet, p.Chunk, tr.bucketAt(p))
		if err != nil {
			t.Fatal(err)
		}
		ps, pbs = append(ps, p), append(pbs, pb)
	}
	order := tr.groupOrder(ps[0], pbs)
	if len(order) != pbs[0].Workers() {
		t.Fatalf("%d workers' orders, want %d", len(order), pbs[0].Workers())
	}
	for w, seq := range order {
		for i, pb := range pbs {
			if n := countOf(seq, int32(i)); n != pb.NumBatches(w) {
				t.Fatalf("worker %d: bucket %d appears %d times, its share has %d batches", w, i, n, pb.NumBatches(w))
			}
		}
		switches := 0
		for k := 1; k < len(seq); k++ {
			if seq[k] != seq[k-1] {
				switches++
			}
		}
		if switches < len(seq)/4 {
			t.Errorf("worker %d: %d switches between buckets in %d batches: not interleaved", w, switches, len(seq))
		}
	}
	if again := tr.groupOrder(ps[0], pbs); !slices.EqualFunc(again, order, slices.Equal) {
		t.Error("the same group gave another order")
	}
	if tr.groupOrder(ps[0], pbs[:1]) != nil {
		t.Error("a group of one bucket: want its shares in order (nil)")
	}
}

func countOf(s []int32, v int32) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
