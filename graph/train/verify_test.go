package train_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// VerifyCheckpoint: a sound checkpoint has no problem; a lost manifest
// beside checkpoint files is one; an empty directory is only noted; a
// superseded file left beside the checkpoint is noted, not a problem.
func TestVerifyCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), strings.Replace(tinySettings, "num_epochs = 40", "num_epochs = 1", 1), 1)
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ck := cfg.CheckpointPath
	if c := train.VerifyCheckpoint(ck); len(c.Problems)+len(c.Notes) > 0 || c.Manifest == nil {
		t.Fatalf("sound checkpoint: %v %v", c.Problems, c.Notes)
	}
	os.WriteFile(filepath.Join(ck, "model.v0.bin"), []byte("old"), 0o644)
	if c := train.VerifyCheckpoint(ck); len(c.Problems) > 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "model.v0.bin: not part of the checkpoint") {
		t.Errorf("superseded file: %v %v", c.Problems, c.Notes)
	}
	os.Remove(filepath.Join(ck, train.ManifestName))
	if c := train.VerifyCheckpoint(ck); len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Error(), "the manifest was lost") {
		t.Errorf("lost manifest: %v", c.Problems)
	}
	// Partition files of number 1 alone: the first checkpoint is not
	// committed yet (written as they left memory), which is only noted.
	os.Remove(filepath.Join(ck, tr.Manifest().Model.File))
	os.Remove(filepath.Join(ck, "model.v0.bin"))
	if c := train.VerifyCheckpoint(ck); len(c.Problems) > 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "the first one is not committed") {
		t.Errorf("partition files before the first commit: %v %v", c.Problems, c.Notes)
	}
	empty := t.TempDir()
	if c := train.VerifyCheckpoint(empty); len(c.Problems) > 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "no checkpoint yet") {
		t.Errorf("empty directory: %v %v", c.Problems, c.Notes)
	}
}
