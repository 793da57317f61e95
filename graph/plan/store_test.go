package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
)

// Invariant 7: the plan over an edge store (which hands over the relation
// column first, so that the shuffle completes while the other columns
// load, on concurrent goroutines for buckets this large) is the plan over
// an in-memory copy of the same edges, in both batching modes, from the
// first read of each bucket (verifying checksums) and after.
func TestStorePlanMatchesMemory(t *testing.T) {
	dir := t.TempDir()
	cfg := storeConfig(t, dir, 2)
	if _, err := importer.GenerateStore(context.Background(), cfg, dir, 400_000, 50_000, 3); err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var _ RelationFirstReader = st
	mem := &MemReader{L: 2, R: 2, Sets: []map[graph.Bucket]*graph.Edges{{}}}
	for i := 0; i < 4; i++ {
		b := graph.Bucket{Lhs: i / 2, Rhs: i % 2}
		n, err := st.NumEdges(0, b)
		if err != nil {
			t.Fatal(err)
		}
		if n < concurrentHoldout {
			t.Fatalf("bucket %v has %d edges: too few for the concurrent paths", b, n)
		}
		e := &graph.Edges{}
		if err := st.ReadEdges(0, b, 0, n, e); err != nil {
			t.Fatal(err)
		}
		mem.Sets[0][b] = e
	}
	st.Close() // forget the verification: the plan's first reads verify again
	if st, err = edgestore.Open(cfg); err != nil {
		t.Fatal(err)
	}
	for _, dyn := range []bool{false, true} {
		o := Options{NumEpochs: 2, NumEdgeChunks: 1, BucketOrder: "affinity", Workers: 2,
			BatchSize: 500, EvalFraction: 0.05, DynamicRelations: dyn, NumRelations: 4, Seed: 9}
		ps, pm := mustPlan(t, st, o), mustPlan(t, mem, o)
		got, want := planDigest(t, mustIter(t, ps, ps.Start())), planDigest(t, mustIter(t, pm, pm.Start()))
		if got != want {
			t.Errorf("dynamic=%v: store plan %s, memory plan %s", dyn, got, want)
		}
	}
	// A relation id outside the config is the same error either way,
	// naming the first such edge's ordinal (found once every column is in).
	o := Options{NumEpochs: 1, NumEdgeChunks: 1, BucketOrder: "affinity", Workers: 2,
		BatchSize: 500, NumRelations: 3, Seed: 9}
	var msgs []string
	for _, r := range []graph.Reader{st, mem} {
		p := mustPlan(t, r, o)
		it := mustIter(t, p, p.Start())
		for it.Next() {
		}
		if it.Err() == nil || !strings.Contains(it.Err().Error(), "config has 3 relations") {
			t.Fatalf("relation 3 with 3 relations: %v", it.Err())
		}
		msgs = append(msgs, it.Err().Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("store: %s\nmemory: %s", msgs[0], msgs[1])
	}
}
