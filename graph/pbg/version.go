package pbg

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// pbgVersion is the checkpoint version PBG would have reached: the
// number of (epoch, edge path, edge chunk) iterations finished. PBG
// resumes at that iteration (retraining the buckets of a partly trained
// one, whose updates the embeddings already hold).
func pbgVersion(cfg *config.Config, man *train.Manifest, store Store) (int, error) {
	sets := cfg.TrainingEdgeSets()
	chunks := 1
	if cfg.NumEdgeChunks != nil {
		chunks = *cfg.NumEdgeChunks
	} else {
		// PBG's rule: the largest bucket (0, 0) of the edge paths over
		// max_edges_per_chunk, rounded up.
		most := 0
		for _, s := range sets {
			n, err := store.NumEdges(s, graph.Bucket{})
			if err != nil {
				return 0, err
			}
			most = max(most, n)
		}
		per := cfg.MaxEdgesPerChunk
		if per <= 0 {
			per = 1_000_000_000
		}
		chunks = max(1, int((int64(most)+per-1)/per))
	}
	// A finished run's next position is (num_epochs, 0, 0): all of them.
	// Raising num_epochs after it keeps the count of those trained.
	return (man.Next.Epoch*len(sets)+man.Next.EdgeSet)*chunks + man.Next.Chunk, nil
}

// ours are the config keys batchprep adds to PBG's schema.
var ours = []string{"edge_roles", "seed", "memory_limit", "checkpoint_buckets", "partition_buffer", "negatives", "degree_exponent", "interleave_buckets"}

// laterKeys are keys of PBG's config schema that not every PBG release
// knows, with their defaults. A release refuses a config.json with a key
// it does not know (its schema loader stops at the first), and fills in
// the default of a key that is absent; so these are written only when set
// to something other than their default.
var laterKeys = map[string]any{"early_stopping": false, "num_groups_per_sharded_partition_server": 1.0, "partition_shard_size": 250.0}

// configJSON is cfg as PBG's config.json (invariant 4): PBG's keys only,
// without laterKeys at their defaults, entity_path and checkpoint_path set
// to dir (where the entity files and the checkpoint are written),
// edge_paths the training edge sets.
func configJSON(cfg *config.Config, dir string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(cfg.Canonical(), &m); err != nil {
		return nil, fmt.Errorf("pbg: config: %w", err)
	}
	for _, k := range ours {
		delete(m, k)
	}
	for k, def := range laterKeys {
		if v, ok := m[k]; ok && v == def {
			delete(m, k)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	m["entity_path"] = abs
	m["checkpoint_path"] = abs
	m["init_path"] = nil
	var paths []string
	for _, s := range cfg.TrainingEdgeSets() {
		paths = append(paths, cfg.EdgePaths[s])
	}
	m["edge_paths"] = paths
	return json.MarshalIndent(m, "", "    ")
}
