package config

// Defaults returns a Config holding PBG's default for every optional key
// (pbg-notes §9) and batchprep's Seed 0. Required keys (entities, relations,
// entity_path, edge_paths, checkpoint_path) are left empty.
func Defaults() *Config {
	return &Config{
		NumEpochs:        1,
		MaxEdgesPerChunk: 1_000_000_000,
		BucketOrder:      "inside_out",
		BatchSize:        1000,
		EvalFraction:     0.05,

		InitScale:          1e-3,
		GlobalEmb:          true,
		Comparator:         "cos",
		LossFn:             "ranking",
		Margin:             0.1,
		Regularizer:        "N3",
		Lr:                 0.01,
		NumBatchNegs:       50,
		NumUniformNegs:     50,
		EvalNumBatchNegs:   intPtr(1000),
		EvalNumUniformNegs: intPtr(1000),
		HogwildDelay:       2,

		NumMachines:                        1,
		NumPartitionServers:                -1,
		DistributedTreeInitOrder:           true,
		NumGroupsForPartitionServer:        16,
		NumGroupsPerShardedPartitionServer: 1,
		PartitionShardSize:                 250,
	}
}

// relationDefaults are the defaults of the keys of one relations[i] table.
var relationDefaults = map[string]any{
	"weight":   1.0,
	"operator": "none",
	"all_negs": false,
}

func intPtr(v int) *int { return &v }
