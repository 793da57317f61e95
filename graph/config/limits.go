package config

// Limits on values whose size decides what import and plan allocate or
// iterate over (invariant 8). A value past its limit is refused by Validate
// with an error naming the key, the value and the limit, before anything
// is allocated. Each is far above what PyTorch-BigGraph runs use (tens of
// partitions, a few edge chunks, one worker per CPU).
const (
	// MaxPartitions bounds entities.T.num_partitions (the edge-store
	// manifests record partition counts up to 2^16).
	MaxPartitions = 1 << 16
	// MaxBuckets bounds lhs x rhs partitions: one bucket file each, per
	// edge set.
	MaxBuckets = 1 << 20
	// MaxEdgeChunks bounds num_edge_chunks: a plan visits every bucket of
	// every chunk, empty or not.
	MaxEdgeChunks = 1 << 20
	// MaxWorkers bounds workers: a plan keeps one share per worker.
	MaxWorkers = 1 << 12
	// MaxEpochs bounds num_epochs, so that epoch counts times edge counts
	// stay within 64 bits.
	MaxEpochs = 1 << 31
	// MaxDimension bounds dimension (and entities.T.dimension): every
	// entity of a held partition has this many float32 values, and each
	// worker keeps scratch rows of it. PBG runs use 100 to 1,024.
	MaxDimension = 1 << 16
	// MaxBatchSize bounds batch_size: a batch's edges are gathered into
	// per-worker arrays of batch_size rows.
	MaxBatchSize = 1 << 24
	// MaxNegatives bounds num_batch_negs, num_uniform_negs and their eval_
	// counterparts: a worker scores each chunk of positives against this
	// many negatives, so its score arrays grow with the square.
	MaxNegatives = 1 << 16
)

// validateLimits checks the limits above.
func (c *Config) validateLimits() error {
	for _, t := range sortedKeys(c.Entities) {
		if n := c.Entities[t].NumPartitions; n > MaxPartitions {
			return keyErr("entities."+t+".num_partitions", "%d exceeds the limit %d", n, MaxPartitions)
		}
	}
	if c.NumEdgeChunks != nil && *c.NumEdgeChunks > MaxEdgeChunks {
		return keyErr("num_edge_chunks", "%d exceeds the limit %d", *c.NumEdgeChunks, MaxEdgeChunks)
	}
	if c.Workers != nil && *c.Workers > MaxWorkers {
		return keyErr("workers", "%d exceeds the limit %d", *c.Workers, MaxWorkers)
	}
	if c.NumEpochs > MaxEpochs {
		return keyErr("num_epochs", "%d exceeds the limit %d", c.NumEpochs, MaxEpochs)
	}
	return c.validateTrainingLimits()
}

// validateTrainingLimits checks the limits of the training keys that size
// the trainer's memory; the memory of their product with the entity counts
// is checked by the commands against the machine's RAM (graph/train's
// MemoryNeed).
func (c *Config) validateTrainingLimits() error {
	if c.Dimension > MaxDimension {
		return keyErr("dimension", "%d exceeds the limit %d", c.Dimension, MaxDimension)
	}
	for _, t := range sortedKeys(c.Entities) {
		if d := c.Entities[t].Dimension; d != nil && *d > MaxDimension {
			return keyErr("entities."+t+".dimension", "%d exceeds the limit %d", *d, MaxDimension)
		}
	}
	if c.BatchSize > MaxBatchSize {
		return keyErr("batch_size", "%d exceeds the limit %d", c.BatchSize, MaxBatchSize)
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"num_batch_negs", c.NumBatchNegs}, {"num_uniform_negs", c.NumUniformNegs},
		{"eval_num_batch_negs", deref(c.EvalNumBatchNegs)}, {"eval_num_uniform_negs", deref(c.EvalNumUniformNegs)}} {
		if f.v > MaxNegatives {
			return keyErr(f.key, "%d exceeds the limit %d", f.v, MaxNegatives)
		}
	}
	return nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// validateBuckets checks the bucket count of a valid shape.
func (c *Config) validateBuckets(lhs, rhs int) error {
	if int64(lhs)*int64(rhs) > MaxBuckets {
		return keyErr("entities", "%d lhs x %d rhs partitions make %d buckets per edge set, more than the limit %d (one file each)",
			lhs, rhs, int64(lhs)*int64(rhs), MaxBuckets)
	}
	return nil
}
