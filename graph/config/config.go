package config

import "runtime"

// Entity is one entity type.
type Entity struct {
	NumPartitions int  `json:"num_partitions" toml:"num_partitions"`
	Featurized    bool `json:"featurized" toml:"featurized"`
	Dimension     *int `json:"dimension,omitempty" toml:"dimension"`
}

// Relation is one relation type; its id is its index in Config.Relations.
type Relation struct {
	Name     string  `json:"name" toml:"name"`
	Lhs      string  `json:"lhs" toml:"lhs"`
	Rhs      string  `json:"rhs" toml:"rhs"`
	Weight   float64 `json:"weight" toml:"weight"`     // default 1.0
	Operator string  `json:"operator" toml:"operator"` // default "none"
	AllNegs  bool    `json:"all_negs" toml:"all_negs"`
}

// Config carries PBG's key names. Fields that only training uses are kept so
// that a PBG config loads and round-trips. Defaults are PBG's
// (reference: pbg-notes §9), plus Seed (ours, default 0).
type Config struct {
	Entities   map[string]Entity `json:"entities" toml:"entities"`
	Relations  []Relation        `json:"relations" toml:"relations"`
	EntityPath string            `json:"entity_path" toml:"entity_path"`
	EdgePaths  []string          `json:"edge_paths" toml:"edge_paths"`
	// EdgeRoles (ours) gives each edge path a role: train, valid or test;
	// nil means train for all. Omitted from Canonical when nil, so that
	// configs without it keep their fingerprints.
	EdgeRoles      []string `json:"edge_roles,omitempty" toml:"edge_roles"`
	CheckpointPath string   `json:"checkpoint_path" toml:"checkpoint_path"`
	InitPath       *string  `json:"init_path" toml:"init_path"`

	CheckpointPreservationInterval *int `json:"checkpoint_preservation_interval" toml:"checkpoint_preservation_interval"` // nil

	NumEpochs        int     `json:"num_epochs" toml:"num_epochs"`                   // 1
	NumEdgeChunks    *int    `json:"num_edge_chunks" toml:"num_edge_chunks"`         // nil: derived
	MaxEdgesPerChunk int64   `json:"max_edges_per_chunk" toml:"max_edges_per_chunk"` // 1e9
	BucketOrder      string  `json:"bucket_order" toml:"bucket_order"`               // inside_out
	Workers          *int    `json:"workers" toml:"workers"`                         // nil: runtime.NumCPU()
	BatchSize        int     `json:"batch_size" toml:"batch_size"`                   // 1000
	EvalFraction     float64 `json:"eval_fraction" toml:"eval_fraction"`             // 0.05
	DynamicRelations bool    `json:"dynamic_relations" toml:"dynamic_relations"`
	Seed             uint64  `json:"seed" toml:"seed"` // 0
	// MemoryLimit (ours) is the memory a training run may use, as a size
	// ("2GiB"; see ParseSize); empty means the machine's memory. Omitted
	// from Canonical when empty, so configs without it keep their
	// fingerprints.
	MemoryLimit string `json:"memory_limit,omitempty" toml:"memory_limit"`
	// CheckpointBuckets (ours) is how many buckets a single-process run
	// trains between two checkpoint commits; 0 means the default
	// (DefaultCheckpointBuckets), 1 a commit after every bucket. It does
	// not change what is trained. Omitted from Canonical when 0.
	CheckpointBuckets int `json:"checkpoint_buckets,omitempty" toml:"checkpoint_buckets"`
	// PartitionBuffer (ours) is c, the partitions of each entity type a
	// training run holds at once (>= 2); 0 means unset: 2, PBG's, or with
	// a memory budget the largest c that fits (train.FitBuffer). Omitted
	// from Canonical when 0.
	PartitionBuffer int `json:"partition_buffer,omitempty" toml:"partition_buffer"`
	// Negatives (ours) is where negatives come from: "bucket" (the
	// bucket's own partitions, PBG's), "buffer" (uniform negatives from
	// every resident partition of the entity type, by size) or
	// "buffer_degree" (as "buffer", and in place of the batch negatives
	// as many draws from every resident partition weighted by the
	// entity's degree); "" means "bucket". Omitted from Canonical when
	// empty.
	Negatives string `json:"negatives,omitempty" toml:"negatives"`
	// DegreeExponent (ours), with negatives = "buffer_degree": a degree
	// negative draws each entity with probability proportional to its
	// degree raised to this power, one of DegreeExponents; 0 means unset
	// (DefaultDegreeExponent). Omitted from Canonical when 0.
	DegreeExponent float64 `json:"degree_exponent,omitempty" toml:"degree_exponent"`
	// InterleaveBuckets (ours) trains the consecutive buckets of the order
	// whose partitions are all resident together, their batches
	// interleaved in a seeded order, instead of one bucket after the
	// other (PBG's). Omitted from Canonical when false.
	InterleaveBuckets bool `json:"interleave_buckets,omitempty" toml:"interleave_buckets"`

	// Training keys (used by a later issue; loaded and validated now).
	Dimension          int      `json:"dimension" toml:"dimension"`
	InitScale          float64  `json:"init_scale" toml:"init_scale"`
	GlobalEmb          bool     `json:"global_emb" toml:"global_emb"`
	Comparator         string   `json:"comparator" toml:"comparator"`
	Bias               bool     `json:"bias" toml:"bias"`
	LossFn             string   `json:"loss_fn" toml:"loss_fn"`
	Margin             float64  `json:"margin" toml:"margin"`
	RegularizationCoef float64  `json:"regularization_coef" toml:"regularization_coef"`
	Regularizer        string   `json:"regularizer" toml:"regularizer"`
	MaxNorm            *float64 `json:"max_norm" toml:"max_norm"`
	Lr                 float64  `json:"lr" toml:"lr"`
	RelationLr         *float64 `json:"relation_lr" toml:"relation_lr"`
	NumBatchNegs       int      `json:"num_batch_negs" toml:"num_batch_negs"`
	NumUniformNegs     int      `json:"num_uniform_negs" toml:"num_uniform_negs"`
	DisableLhsNegs     bool     `json:"disable_lhs_negs" toml:"disable_lhs_negs"`
	DisableRhsNegs     bool     `json:"disable_rhs_negs" toml:"disable_rhs_negs"`
	EvalNumBatchNegs   *int     `json:"eval_num_batch_negs" toml:"eval_num_batch_negs"`     // 1000; nil: as in training
	EvalNumUniformNegs *int     `json:"eval_num_uniform_negs" toml:"eval_num_uniform_negs"` // 1000; nil: as in training
	EarlyStopping      bool     `json:"early_stopping" toml:"early_stopping"`
	HogwildDelay       float64  `json:"hogwild_delay" toml:"hogwild_delay"`
	HalfPrecision      bool     `json:"half_precision" toml:"half_precision"`

	// Distributed-training and I/O keys of PBG (loaded and validated; the
	// single-machine batch preparation does not use them).
	NumMachines                        int     `json:"num_machines" toml:"num_machines"`
	NumPartitionServers                int     `json:"num_partition_servers" toml:"num_partition_servers"`
	DistributedInitMethod              *string `json:"distributed_init_method" toml:"distributed_init_method"`
	DistributedTreeInitOrder           bool    `json:"distributed_tree_init_order" toml:"distributed_tree_init_order"`
	NumGroupsForPartitionServer        int     `json:"num_groups_for_partition_server" toml:"num_groups_for_partition_server"`
	NumGroupsPerShardedPartitionServer int     `json:"num_groups_per_sharded_partition_server" toml:"num_groups_per_sharded_partition_server"`
	PartitionShardSize                 int     `json:"partition_shard_size" toml:"partition_shard_size"`
	NumGPUs                            int     `json:"num_gpus" toml:"num_gpus"`
	BackgroundIO                       bool    `json:"background_io" toml:"background_io"`
	Verbose                            int     `json:"verbose" toml:"verbose"`
}

// NumWorkers is the number of Hogwild workers: Workers when set, otherwise
// the number of CPUs of this machine (PBG's default, invariant 3).
func (c *Config) NumWorkers() int {
	if c.Workers != nil {
		return *c.Workers
	}
	return runtime.NumCPU()
}
