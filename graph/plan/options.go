package plan

import (
	"fmt"
	"math"

	"github.com/batchprep/batchprep/graph/bucket"
)

// Options are the settings that shape a plan (PBG's key names in the
// comments). OptionsFromConfig converts a graph/config.Config.
type Options struct {
	NumEpochs        int     // num_epochs
	NumEdgeChunks    int     // num_edge_chunks; 0 = derive from MaxEdgesPerChunk
	MaxEdgesPerChunk int64   // max_edges_per_chunk
	BucketOrder      string  // bucket_order
	Workers          int     // workers (the resolved value, never 0)
	BatchSize        int     // batch_size
	EvalFraction     float64 // eval_fraction
	DynamicRelations bool    // dynamic_relations
	NumRelations     int     // len(relations); 0 = do not check relation ids
	Seed             uint64  // seed
	// PartitionBuffer is c, the partitions of a type held at once
	// (partition_buffer); the buffer order depends on it. 0 means 2.
	PartitionBuffer int
	// EdgeSets are the store's edge sets the plan walks, in order (the
	// train edge sets of edge_roles); nil walks every edge set. The plan's
	// edge set s is the store's EdgeSets[s].
	EdgeSets []int
}

// Validate reports the first impossible setting, naming its config key.
func (o *Options) Validate() error {
	switch {
	case o.NumEpochs < 0:
		return fmt.Errorf("plan: num_epochs = %d: must be >= 0", o.NumEpochs)
	case o.NumEdgeChunks < 0:
		return fmt.Errorf("plan: num_edge_chunks = %d: must be >= 1 when set", o.NumEdgeChunks)
	case o.NumEdgeChunks == 0 && o.MaxEdgesPerChunk < 1:
		return fmt.Errorf("plan: max_edges_per_chunk = %d: must be >= 1", o.MaxEdgesPerChunk)
	case o.Workers < 1:
		return fmt.Errorf("plan: workers = %d: must be >= 1", o.Workers)
	case o.BatchSize < 1:
		return fmt.Errorf("plan: batch_size = %d: must be >= 1", o.BatchSize)
	case math.IsNaN(o.EvalFraction) || o.EvalFraction < 0 || o.EvalFraction > 1:
		return fmt.Errorf("plan: eval_fraction = %v: must be in [0, 1]", o.EvalFraction)
	case o.NumRelations < 0:
		return fmt.Errorf("plan: %d relations", o.NumRelations)
	case o.PartitionBuffer != 0 && o.PartitionBuffer < 2:
		return fmt.Errorf("plan: partition_buffer = %d: must be >= 2", o.PartitionBuffer)
	case o.EdgeSets != nil && len(o.EdgeSets) == 0:
		return fmt.Errorf("plan: no edge set to walk (edge_roles names no train edge set)")
	}
	for _, n := range bucket.Names {
		if o.BucketOrder == n {
			return nil
		}
	}
	return fmt.Errorf("plan: bucket_order = %q: want random, affinity, inside_out, outside_in or buffer", o.BucketOrder)
}

// Buffer is c, PartitionBuffer or its default 2.
func (o *Options) Buffer() int {
	if o.PartitionBuffer >= 2 {
		return o.PartitionBuffer
	}
	return 2
}
