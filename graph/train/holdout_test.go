package train_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// Invariant 6: holdout ranking skips candidates that are the true entity
// itself. On a 10-entity ring whose edges appear three times (so a
// held-out edge has trained twins and is learned), 1000 uniform negatives
// per chunk draw the true entity about 100 times; counted as ties, they
// held the holdout MRR near 0.01 whatever the model. Skipped, a learned
// model ranks its held-out edges first.
func TestHoldoutMRRSkipsTrueEntity(t *testing.T) {
	dir := t.TempDir()
	ring := ringEdges(10)
	settings := strings.Replace(tinySettings, "eval_fraction = 0", "eval_fraction = 0.1\neval_num_uniform_negs = 1000", 1)
	cfg := fixture(t, dir, ring+ring+ring, settings, 1)
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := tr.Manifest().History
	last := h[len(h)-1]
	if last.Holdout == 0 || last.MRRAfter < 0.5 {
		t.Fatalf("last epoch's holdout MRR %.4f over %d ranks, want >= 0.5 (first epoch before training: %.4f)", last.MRRAfter, last.Holdout, h[0].MRRBefore)
	}
	t.Logf("holdout MRR: first epoch before %.4f, last epoch after %.4f (%d ranks)", h[0].MRRBefore, last.MRRAfter, last.Holdout)
}
