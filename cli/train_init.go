package cli

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/pbg"
	"github.com/batchprep/batchprep/graph/train"
)

// initFrom opens the config's init_path: a PyTorch-BigGraph checkpoint
// directory (docs/formats-pbg.md); nil without init_path.
func initFrom(cfg *config.Config, store *edgestore.Store) (train.Init, error) {
	if cfg.InitPath == nil {
		return nil, nil
	}
	if !pbg.IsCheckpoint(*cfg.InitPath) {
		return nil, fmt.Errorf("init_path %s: no %s: init_path must be a PyTorch-BigGraph checkpoint directory (batchprep export --format pbg writes one)", *cfg.InitPath, pbg.VersionFile)
	}
	return pbg.OpenInit(*cfg.InitPath, cfg, store)
}
