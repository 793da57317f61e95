package plan_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/plan"
)

// A trainer goes from a config to batches without the CLI: the config's
// options, a plan over a graph.Reader (edgestore.Open(cfg) for a real
// store; an in-memory one here), then per bucket one Share per Hogwild
// worker, each walked by its own goroutine.
func Example() {
	cfg, err := config.Parse([]byte(`
entity_path = "entities"
edge_paths = ["edges"]
checkpoint_path = "model"
workers = 2
batch_size = 2
eval_fraction = 0.25
dynamic_relations = true
[entities.node]
num_partitions = 1
[[relations]]
name = "link"
lhs = "node"
rhs = "node"
`), "toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	edges := &graph.Edges{}
	for i := range 8 {
		edges.Lhs = append(edges.Lhs, uint32(i))
		edges.Rhs = append(edges.Rhs, uint32((i+1)%8))
		edges.Rel = append(edges.Rel, 0)
		edges.Ordinal = append(edges.Ordinal, uint64(i))
	}
	store := &plan.MemReader{L: 1, R: 1, Sets: []map[graph.Bucket]*graph.Edges{{{Lhs: 0, Rhs: 0}: edges}}}
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range p.Order(0, 0, 0) {
		pb, err := p.PrepareBucket(context.Background(), 0, 0, 0, b)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("held out rows:", len(pb.Holdout()))
		trained := make([]int, pb.Workers())
		var wg sync.WaitGroup
		for w := range pb.Workers() {
			wg.Go(func() {
				s := pb.Share(w)
				for bt, ok := s.Next(); ok; bt, ok = s.Next() {
					trained[w] += len(bt.Rows) // a trainer updates embeddings here
				}
			})
		}
		wg.Wait()
		fmt.Println("edges per worker:", trained)
	}
	// Output:
	// held out rows: 2
	// edges per worker: [3 3]
}
