package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/pbg"
	"github.com/batchprep/batchprep/graph/train"
)

// initFrom opens the config's init_path: a PyTorch-BigGraph checkpoint
// directory (docs/formats-pbg.md), whose rows are placed by entity name;
// nil without init_path. The line that says what matched is returned for
// train to print when the run starts fresh.
func initFrom(cfg *config.Config, cfgPath string, store *edgestore.Store, allowUnmatched bool) (train.Init, string, error) {
	if cfg.InitPath == nil {
		return nil, "", nil
	}
	if !pbg.IsCheckpoint(*cfg.InitPath) {
		return nil, "", fmt.Errorf("init_path %s: no %s: init_path must be a PyTorch-BigGraph checkpoint directory (batchprep export --format pbg writes one)", *cfg.InitPath, pbg.VersionFile)
	}
	in, err := pbg.OpenInit(*cfg.InitPath, cfg, store, pbg.InitOptions{AllowUnmatched: allowUnmatched, ConfigDir: filepath.Dir(cfgPath)})
	var ue *pbg.UnmatchedError
	if errors.As(err, &ue) {
		return nil, "", fmt.Errorf("%w; --init-allow-unmatched starts the others at random", err)
	}
	if err != nil {
		return nil, "", err
	}
	return in, initLine(in.Report()), nil
}

// initLine says where a run starts from: the checkpoint, its kind and
// version, where its names were read, and the matches per type.
func initLine(r pbg.InitReport) string {
	matched, store, ckpt := r.Matched()
	var per []string
	for _, t := range r.Types {
		per = append(per, fmt.Sprintf("%s %d of %d", t.Type, t.Matched, t.Store))
	}
	line := fmt.Sprintf("starting from init_path %s (PyTorch-BigGraph checkpoint, version %d; names from %s): %d of the store's %d entities matched by name (%s)",
		r.Dir, r.Version, r.NamesDir, matched, store, strings.Join(per, ", "))
	if matched < store {
		line += fmt.Sprintf("; the other %d start at random", store-matched)
	}
	if extra := ckpt - matched; extra > 0 {
		line += fmt.Sprintf("; %d of the checkpoint's %d entities are not in the store", extra, ckpt)
	}
	return line
}
