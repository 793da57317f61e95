package plan

import "github.com/batchprep/batchprep/graph/config"

// OptionsFromConfig returns the plan options a loaded (and validated)
// config names: PBG's keys, with Workers resolved (config.NumWorkers) and,
// outside dynamic mode, the relation ids checked against the config's
// relations. The plan walks the config's train edge sets (edge_roles).
func OptionsFromConfig(cfg *config.Config) Options {
	o := Options{NumEpochs: cfg.NumEpochs, MaxEdgesPerChunk: cfg.MaxEdgesPerChunk,
		BucketOrder: cfg.BucketOrder, Workers: cfg.NumWorkers(), BatchSize: cfg.BatchSize,
		EvalFraction: cfg.EvalFraction, DynamicRelations: cfg.DynamicRelations, Seed: cfg.Seed,
		PartitionBuffer: cfg.Buffer()}
	if cfg.EdgeRoles != nil {
		o.EdgeSets = cfg.TrainingEdgeSets()
	}
	if cfg.NumEdgeChunks != nil {
		o.NumEdgeChunks = *cfg.NumEdgeChunks
	}
	if !cfg.DynamicRelations {
		o.NumRelations = len(cfg.Relations)
	}
	return o
}
