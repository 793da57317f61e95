package cli

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/pbg"
)

// usePBGData returns cfg unchanged unless its entity_path and edge_paths
// hold PyTorch-BigGraph's imported data (pbg.IsData): then it returns the
// config of the batchprep store converted from those files, beside
// entity_path (pbg.MirrorDir), converting them first when they are new or
// changed. One line on stderr says which.
func usePBGData(env *Env, cfg *config.Config) (*config.Config, error) {
	if !pbg.IsData(cfg) {
		return cfg, nil
	}
	mc, rep, err := pbg.EnsureMirror(env.Ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("converting PyTorch-BigGraph's data in %s: %w", cfg.EntityPath, err)
	}
	if rep.Built {
		var edges int64
		for _, n := range rep.Import.Edges {
			edges += n
		}
		fmt.Fprintf(env.Stderr, "batchprep: PyTorch-BigGraph's data in %s converted into the store %s (%d edges in %d edge sets; %s); later runs reuse it until PBG's files change\n",
			cfg.EntityPath, rep.Dir, edges, len(rep.Import.Edges), rep.Reason)
	} else {
		fmt.Fprintf(env.Stderr, "batchprep: reading the store %s, converted from PyTorch-BigGraph's data in %s (unchanged since)\n", rep.Dir, cfg.EntityPath)
	}
	return mc, nil
}
