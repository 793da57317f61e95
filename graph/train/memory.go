package train

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/config"
)

// Memory is an estimate of the bytes a command will hold at its peak,
// computed from the config and the store's entity counts before anything
// is allocated (invariant 8), with the terms that make it up.
type Memory struct {
	Bytes  uint64
	Tables uint64 // embeddings and Adagrad accumulators held at once
	Work   uint64 // the scratch arrays of a chunk of positives
	// Rows is the number of entity rows held at once; Dim the dimension.
	Rows uint64
	Dim  int
}

func (m Memory) String() string {
	return fmt.Sprintf("%d MiB: %d entity rows of dimension %d (%d MiB) and the workers' scratch arrays (%d MiB)",
		m.Bytes>>20, m.Rows, m.Dim, m.Tables>>20, m.Work>>20)
}

// EvalMemory estimates what eval and export hold: every partition of every
// type, loaded and then concatenated per type (two copies at the peak).
func EvalMemory(cfg *config.Config, store Store) (Memory, error) {
	d := uint64(cfg.Dimension)
	var rows uint64
	for _, typ := range cfg.EntityTypes() {
		counts, err := partitionRows(cfg, store, typ)
		if err != nil {
			return Memory{}, err
		}
		for _, n := range counts {
			rows += n
		}
	}
	m := Memory{Rows: rows, Dim: cfg.Dimension, Tables: 2 * rows * (d + 1) * 4}
	m.Work = chunkBytes(cfg, d, 0)
	m.Bytes = m.Tables + m.Work
	return m, nil
}

// partitionRows lists the entity count of each of typ's partitions.
func partitionRows(cfg *config.Config, store Store, typ string) ([]uint64, error) {
	n := max(cfg.Entities[typ].NumPartitions, 1)
	counts := make([]uint64, 0, n)
	for p := range n {
		c, err := store.EntityCount(typ, p)
		if err != nil {
			return nil, err
		}
		counts = append(counts, uint64(c))
	}
	return counts, nil
}

// chunkBytes bounds one worker's scratch for a chunk of positives: k
// positives (num_batch_negs, else num_uniform_negs, else the batch; the
// batch when a relation scores all entities) against k + uniform
// candidates (all largest rows for all_negs), each side's rows and
// gradients of dimension d, the score matrices with their gradients, and
// the batch's columns. Holdout evaluation uses the eval_ counts likewise;
// the larger of the two is taken.
func chunkBytes(cfg *config.Config, d, largest uint64) uint64 {
	ebn, eun := uint64(cfg.NumBatchNegs), uint64(cfg.NumUniformNegs)
	if cfg.EvalNumBatchNegs != nil {
		ebn = uint64(*cfg.EvalNumBatchNegs)
	}
	if cfg.EvalNumUniformNegs != nil {
		eun = uint64(*cfg.EvalNumUniformNegs)
	}
	return max(trainChunkBytes(cfg, d, largest), negChunkBytes(cfg, d, largest, ebn, eun))
}

// trainChunkBytes is chunkBytes for training's negative counts only.
func trainChunkBytes(cfg *config.Config, d, largest uint64) uint64 {
	return negChunkBytes(cfg, d, largest, uint64(cfg.NumBatchNegs), uint64(cfg.NumUniformNegs))
}

// negChunkBytes is chunkBytes for given batch and uniform negative counts.
func negChunkBytes(cfg *config.Config, d, largest, batchNegs, uniform uint64) uint64 {
	allNegs := false
	for _, r := range cfg.Relations {
		allNegs = allNegs || r.AllNegs
	}
	one := func(batchNegs, uniform uint64) uint64 {
		batch := uint64(cfg.BatchSize)
		k, cand := batch, batch+uniform
		switch {
		case allNegs:
			cand = batch + largest
		case batchNegs > 0:
			k, cand = batchNegs, batchNegs+uniform
		case uniform > 0:
			k, cand = uniform, 2*uniform
		}
		floats := 6*k*d + 3*cand*d + 2*k*cand + 4*batch
		return 4 * floats
	}
	return one(batchNegs, uniform)
}
