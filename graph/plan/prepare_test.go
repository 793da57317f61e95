package plan

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/graph"
)

// Invariant 10: PrepareBucket gives, per bucket, the holdout and every
// worker's batches that Iter yields, on several configs in both relation
// modes; the shares are walked concurrently (go test -race checks that they
// share nothing mutable), and buckets are prepared in reverse order.
func TestPrepareBucketMatchesIter(t *testing.T) {
	ctx := context.Background()
	for _, dyn := range []bool{false, true} {
		for i, shape := range [][3]int{{1, 1, 1}, {2, 2, 1}, {3, 2, 2}} {
			for _, chunks := range []int{1, 2} {
				name := fmt.Sprintf("dyn=%v/%d/chunks=%d", dyn, i, chunks)
				g := testGraph(shape[0], shape[1], shape[2], 50, 3, i%2 == 0, uint64(i+1))
				o := testOptions()
				o.DynamicRelations, o.NumEdgeChunks, o.Workers = dyn, chunks, 1+i
				p := mustPlan(t, g, o)
				type key struct{ e, s, c, l, r int }
				want := map[key][]string{}
				var keys []key
				it := mustIter(t, p, p.Start())
				for it.Next() {
					r := it.Record()
					k := key{r.Epoch, r.EdgeSet, r.Chunk, r.Bucket.Lhs, r.Bucket.Rhs}
					if r.Kind == BucketRecord {
						keys = append(keys, k)
						want[k] = append(want[k], fmt.Sprintf("n=%d holdout=%v", r.Edges, r.Ordinals(nil, r.Holdout)))
						continue
					}
					want[k] = append(want[k], fmt.Sprintf("w%d b%d rel=%d %v", r.Worker, r.Batch, r.Relation, r.Ordinals(nil, r.Rows)))
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				for j := len(keys) - 1; j >= 0; j-- {
					k := keys[j]
					pb, err := p.PrepareBucket(ctx, k.e, k.s, k.c, bucketOf(k.l, k.r))
					if err != nil {
						t.Fatal(err)
					}
					var ords []uint64
					for _, x := range pb.Holdout() {
						ords = append(ords, pb.Data().Ordinal[x])
					}
					got := []string{fmt.Sprintf("n=%d holdout=%v", pb.NumEdges(), ords)}
					shares := make([][]string, pb.Workers())
					var wg sync.WaitGroup
					for w := range pb.Workers() {
						wg.Go(func() {
							s := pb.Share(w)
							for b, ok := s.Next(); ok; b, ok = s.Next() {
								var o []uint64
								for _, x := range b.Rows {
									o = append(o, pb.Data().Ordinal[x])
								}
								shares[w] = append(shares[w], fmt.Sprintf("w%d b%d rel=%d %v", b.Worker, b.Index, b.Relation, o))
							}
						})
					}
					wg.Wait()
					for _, s := range shares {
						got = append(got, s...)
					}
					if fmt.Sprint(got) != fmt.Sprint(want[k]) {
						t.Fatalf("%s %+v:\n got %v\nwant %v", name, k, got, want[k])
					}
				}
			}
		}
	}
}

// Share.Seek resumes a share at a batch; coordinates outside the plan are
// refused.
func TestPrepareBucketSeekAndBounds(t *testing.T) {
	p := mustPlan(t, testGraph(2, 2, 1, 60, 3, false, 5), testOptions())
	pb, err := p.PrepareBucket(context.Background(), 1, 0, 0, bucketOf(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if pb.NumBatches(0) < 2 {
		t.Fatalf("want at least 2 batches, got %d", pb.NumBatches(0))
	}
	a := pb.Share(0)
	a.Next()
	second, _ := a.Next()
	b := pb.Share(0)
	b.Seek(1)
	if got, _ := b.Next(); fmt.Sprint(got) != fmt.Sprint(second) {
		t.Fatalf("Seek(1): got %v, want %v", got, second)
	}
	b.Seek(pb.NumBatches(0))
	if _, ok := b.Next(); ok {
		t.Fatal("Seek past the end still yields")
	}
	for _, c := range [][5]int{{-1, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 2, 0}, {0, 0, 0, 0, -1}} {
		if _, err := p.PrepareBucket(context.Background(), c[0], c[1], c[2], bucketOf(c[3], c[4])); err == nil {
			t.Errorf("PrepareBucket%v: no error", c)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.PrepareBucket(ctx, 0, 0, 0, bucketOf(0, 0)); err == nil {
		t.Error("canceled context: no error")
	}
}

func bucketOf(l, r int) graph.Bucket { return graph.Bucket{Lhs: l, Rhs: r} }
