package train_test

import (
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// Every config in examples/ (the training runs of docs/quality.md and
// docs/performance-train.md among them) loads and is accepted by the
// trainer: its keys parse, validate, and build a model.
func TestExampleConfigsLoad(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.toml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example configs: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			cfg, err := config.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := train.NewModel(cfg, 237); err != nil {
				t.Fatal(err)
			}
		})
	}
}
