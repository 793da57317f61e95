package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run that diverges exits 1 naming the bucket and what is not finite,
// with one prefix and no library text, and writes no checkpoint of the bad
// bucket. Regression: with the cos comparator the loss stays finite while
// embeddings turn NaN, and the run ended with exit 0 and a NaN model (with
// a non-finite loss it failed with "json: unsupported value: NaN").
func TestTrainDiverges(t *testing.T) {
	dir, cfg := trainFixture(t)
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "lr=1e30")
	if code != 1 || !strings.HasPrefix(errOut, "batchprep train: the model diverged in epoch 1 of 3, edge set 0, chunk 0, bucket (") ||
		strings.Contains(errOut, "json") || strings.Contains(errOut, "train: train:") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "checkpoint.json")); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint was written: %v", err)
	}
	t.Log(errOut)
}
