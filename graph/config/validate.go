package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Allowed values of the enumerated keys.
var (
	BucketOrders = []string{"random", "affinity", "inside_out", "outside_in", "buffer"}
	NegativesAll = []string{"bucket", "buffer", "buffer_degree"}
	Operators    = []string{"none", "diagonal", "translation", "linear", "affine", "complex_diagonal"}
	Comparators  = []string{"dot", "cos", "l2", "squared_l2"}
	LossFns      = []string{"ranking", "logistic", "softmax"}
	Regularizers = []string{"N3"}
)

func oneOf(key, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return &Error{Key: key, Msg: fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", "))}
}

func keyErr(key, format string, a ...any) error {
	return &Error{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// Validate checks every value (invariant 2): required keys present, numbers
// in range, enumerations known, relations naming known entity types, and
// PBG's partition rule (invariant 4). The error names the first bad key.
// Keys needed only for training are checked by ValidateTraining.
func (c *Config) Validate() error {
	if len(c.Entities) == 0 {
		return keyErr("entities", "at least one entity type is required")
	}
	types := sortedKeys(c.Entities)
	for _, t := range types {
		e := c.Entities[t]
		if t == "" {
			return keyErr("entities", "an entity type has an empty name")
		}
		if e.NumPartitions < 1 {
			return keyErr("entities."+t+".num_partitions", "must be >= 1, got %d", e.NumPartitions)
		}
		if e.Dimension != nil && *e.Dimension < 1 {
			return keyErr("entities."+t+".dimension", "must be >= 1 when set, got %d", *e.Dimension)
		}
	}
	if len(c.Relations) == 0 {
		return keyErr("relations", "at least one relation is required")
	}
	if c.MemoryLimit != "" {
		if _, err := ParseSize(c.MemoryLimit); err != nil {
			return keyErr("memory_limit", "%v", err)
		}
	}
	if c.CheckpointBuckets < 0 {
		return keyErr("checkpoint_buckets", "must be >= 0 (0: the default, one commit per row of the bucket grid; 1: after every bucket), got %d", c.CheckpointBuckets)
	}
	if c.PartitionBuffer != 0 && c.PartitionBuffer < 2 {
		return keyErr("partition_buffer", "must be >= 2 (partitions of a type held at once), got %d", c.PartitionBuffer)
	}
	if c.Negatives != "" {
		if err := oneOf("negatives", c.Negatives, NegativesAll); err != nil {
			return err
		}
	}
	if c.DegreeExponent != 0 {
		if !c.DegreeNegatives() {
			return keyErr("degree_exponent", "applies to negatives = \"buffer_degree\" only (negatives is %q)", c.Negatives)
		}
		if !slices.Contains(DegreeExponents, c.DegreeExponent) {
			return keyErr("degree_exponent", "%v is not one of 0.25, 0.5, 0.75, 1", c.DegreeExponent)
		}
	}
	seen := map[string]int{}
	for i, r := range c.Relations {
		k := fmt.Sprintf("relations[%d]", i)
		if r.Name == "" {
			return keyErr(k+".name", "must not be empty")
		}
		if j, dup := seen[r.Name]; dup {
			return keyErr(k+".name", "%q is also the name of relations[%d]", r.Name, j)
		}
		seen[r.Name] = i
		if _, ok := c.Entities[r.Lhs]; !ok {
			return keyErr(k+".lhs", "unknown entity type %q (known: %s)", r.Lhs, strings.Join(types, ", "))
		}
		if _, ok := c.Entities[r.Rhs]; !ok {
			return keyErr(k+".rhs", "unknown entity type %q (known: %s)", r.Rhs, strings.Join(types, ", "))
		}
		if !(r.Weight > 0) || math.IsInf(r.Weight, 0) {
			return keyErr(k+".weight", "must be a finite number > 0, got %v", r.Weight)
		}
		if err := oneOf(k+".operator", r.Operator, Operators); err != nil {
			return err
		}
	}
	if c.EntityPath == "" {
		return keyErr("entity_path", "must not be empty")
	}
	if len(c.EdgePaths) == 0 {
		return keyErr("edge_paths", "at least one edge path is required")
	}
	for i, p := range c.EdgePaths {
		if p == "" {
			return keyErr(fmt.Sprintf("edge_paths[%d]", i), "must not be empty")
		}
	}
	if err := c.validateEdgeRoles(); err != nil {
		return err
	}
	if c.CheckpointPreservationInterval != nil && *c.CheckpointPreservationInterval < 1 {
		return keyErr("checkpoint_preservation_interval", "must be >= 1 when set, got %d", *c.CheckpointPreservationInterval)
	}
	if c.NumEpochs < 0 {
		return keyErr("num_epochs", "must be >= 0, got %d", c.NumEpochs)
	}
	if c.NumEdgeChunks != nil && *c.NumEdgeChunks < 1 {
		return keyErr("num_edge_chunks", "must be >= 1 when set, got %d", *c.NumEdgeChunks)
	}
	if c.MaxEdgesPerChunk < 1 {
		return keyErr("max_edges_per_chunk", "must be >= 1, got %d", c.MaxEdgesPerChunk)
	}
	if err := oneOf("bucket_order", c.BucketOrder, BucketOrders); err != nil {
		return err
	}
	if c.Workers != nil && *c.Workers < 1 {
		return keyErr("workers", "must be >= 1 when set, got %d", *c.Workers)
	}
	if c.BatchSize < 1 {
		return keyErr("batch_size", "must be >= 1, got %d", c.BatchSize)
	}
	if !(c.EvalFraction >= 0 && c.EvalFraction < 1) {
		return keyErr("eval_fraction", "must be in [0, 1), got %v", c.EvalFraction)
	}
	if c.DynamicRelations && len(c.Relations) != 1 {
		return keyErr("dynamic_relations", "needs exactly one relation in relations (it gives the entity types of every edge), got %d", len(c.Relations))
	}
	if err := c.validateTrainingRanges(); err != nil {
		return err
	}
	if err := c.validateLimits(); err != nil {
		return err
	}
	lhs, rhs, err := c.bucketShape()
	if err != nil {
		return err
	}
	return c.validateBuckets(lhs, rhs)
}

// validateTrainingRanges checks the ranges of the training and distributed
// keys; values that cannot mean anything are errors even when not training.
func (c *Config) validateTrainingRanges() error {
	nonNeg := []struct {
		key string
		v   float64
	}{
		{"dimension", float64(c.Dimension)}, {"init_scale", c.InitScale},
		{"regularization_coef", c.RegularizationCoef}, {"lr", c.Lr},
		{"num_batch_negs", float64(c.NumBatchNegs)}, {"num_uniform_negs", float64(c.NumUniformNegs)},
		{"hogwild_delay", c.HogwildDelay}, {"num_groups_for_partition_server", float64(c.NumGroupsForPartitionServer)},
		{"partition_shard_size", float64(c.PartitionShardSize)}, {"num_gpus", float64(c.NumGPUs)},
		{"verbose", float64(c.Verbose)}, {"margin", math.Abs(c.Margin)},
	}
	for _, f := range nonNeg {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return keyErr(f.key, "must be a finite number >= 0, got %v", f.v)
		}
	}
	for _, f := range []struct {
		key string
		v   *int
	}{{"eval_num_batch_negs", c.EvalNumBatchNegs}, {"eval_num_uniform_negs", c.EvalNumUniformNegs}} {
		if f.v != nil && *f.v < 0 {
			return keyErr(f.key, "must be >= 0 when set, got %d", *f.v)
		}
	}
	if !(c.InitScale > 0) {
		return keyErr("init_scale", "must be > 0, got %v", c.InitScale)
	}
	if c.LossFn == "ranking" && !(c.Margin > 0) {
		return keyErr("margin", "must be > 0 with loss_fn = \"ranking\" (a margin of 0 or less never asks a positive to score above a negative), got %v", c.Margin)
	}
	if c.EvalFraction > 0 {
		batchNegs, uniform := c.NumBatchNegs, c.NumUniformNegs
		if c.EvalNumBatchNegs != nil {
			batchNegs = *c.EvalNumBatchNegs
		}
		if c.EvalNumUniformNegs != nil {
			uniform = *c.EvalNumUniformNegs
		}
		if batchNegs == 0 && uniform == 0 {
			return keyErr("eval_num_uniform_negs", "0, and eval_num_batch_negs 0, with eval_fraction = %v would rank each held-out edge against no negative: set one of them >= 1 (or eval_fraction = 0)", c.EvalFraction)
		}
	}
	if c.RelationLr != nil && !(*c.RelationLr >= 0) {
		return keyErr("relation_lr", "must be >= 0 when set, got %v", *c.RelationLr)
	}
	if c.MaxNorm != nil && !(*c.MaxNorm > 0) {
		return keyErr("max_norm", "must be > 0 when set, got %v", *c.MaxNorm)
	}
	if c.DisableLhsNegs && c.DisableRhsNegs {
		return keyErr("disable_rhs_negs", "cannot be true together with disable_lhs_negs")
	}
	if err := oneOf("comparator", c.Comparator, Comparators); err != nil {
		return err
	}
	if err := oneOf("loss_fn", c.LossFn, LossFns); err != nil {
		return err
	}
	if err := oneOf("regularizer", c.Regularizer, Regularizers); err != nil {
		return err
	}
	if c.NumMachines < 1 {
		return keyErr("num_machines", "must be >= 1, got %d", c.NumMachines)
	}
	if c.NumMachines > 1 && c.DistributedInitMethod == nil {
		return keyErr("distributed_init_method", "is required when num_machines > 1")
	}
	if c.NumPartitionServers < -1 {
		return keyErr("num_partition_servers", "must be >= -1, got %d", c.NumPartitionServers)
	}
	if c.NumGroupsPerShardedPartitionServer < 1 {
		return keyErr("num_groups_per_sharded_partition_server", "must be >= 1, got %d", c.NumGroupsPerShardedPartitionServer)
	}
	return nil
}

// ValidateTraining checks what only training needs on top of Validate:
// dimension set, no featurized entity type, some negatives to train
// against, and batch_size a multiple of num_batch_negs (PBG's rule).
func (c *Config) ValidateTraining() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Dimension < 1 {
		return keyErr("dimension", "is required to train (>= 1)")
	}
	if c.CheckpointPath == "" {
		return keyErr("checkpoint_path", "is required to train (where the model is saved)")
	}
	for _, name := range c.EntityTypes() {
		if c.Entities[name].Featurized {
			// As import says it: no store holds such a type.
			return keyErr("entities."+name, "featurized entity types are not supported")
		}
	}
	if err := c.validateNegatives(); err != nil {
		return err
	}
	if c.NumBatchNegs > 0 && c.BatchSize%c.NumBatchNegs != 0 {
		return keyErr("batch_size", "must be a multiple of num_batch_negs (%d), got %d", c.NumBatchNegs, c.BatchSize)
	}
	return nil
}

// BucketShape returns the number of lhs and rhs partitions (invariant 4):
// on each side, the one partition count shared by the partitioned entity
// types (num_partitions > 1) used on that side of some relation, or 1 when
// that side has none. It assumes a valid config.
func (c *Config) BucketShape() (lhs, rhs int) {
	l, r, _ := c.bucketShape()
	return l, r
}

func (c *Config) bucketShape() (lhs, rhs int, err error) {
	side := func(name string, pick func(Relation) string) (int, error) {
		var types []string
		for _, r := range c.Relations {
			types = append(types, pick(r))
		}
		sort.Strings(types)
		n, first := 1, ""
		for _, t := range types {
			p := c.Entities[t].NumPartitions
			if p <= 1 {
				continue
			}
			if n == 1 {
				n, first = p, t
			} else if p != n {
				return 0, keyErr("entities."+t+".num_partitions",
					"the partitioned entity types on the %s side must share one partition count: %s has %d, %s has %d",
					name, first, n, t, p)
			}
		}
		return n, nil
	}
	if lhs, err = side("lhs", func(r Relation) string { return r.Lhs }); err != nil {
		return 0, 0, err
	}
	rhs, err = side("rhs", func(r Relation) string { return r.Rhs })
	return lhs, rhs, err
}

// EntityTypes returns the entity type names, sorted.
func (c *Config) EntityTypes() []string { return sortedKeys(c.Entities) }

// RelationIndex returns the id of the relation called name.
func (c *Config) RelationIndex(name string) (int, bool) {
	for i, r := range c.Relations {
		if r.Name == name {
			return i, true
		}
	}
	return -1, false
}

// validateNegatives refuses a config that would train some relation
// against no negative at all: num_batch_negs and num_uniform_negs both 0
// for a relation without all_negs. Such a run would learn nothing useful
// and say nothing about it.
func (c *Config) validateNegatives() error {
	if c.NumBatchNegs > 0 || c.NumUniformNegs > 0 {
		return nil
	}
	for i, r := range c.Relations {
		if !r.AllNegs {
			return keyErr("num_batch_negs", "0, and num_uniform_negs 0: relation %q (relations[%d], all_negs false) would train against no negative; set num_batch_negs or num_uniform_negs >= 1 (PBG's defaults are 50 and 50), or all_negs = true on the relation", r.Name, i)
		}
	}
	return nil
}
