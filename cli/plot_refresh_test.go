package cli

import (
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// The plot is rewritten once per committed epoch, however many bucket
// events arrive while the history stays the same (a commit every K
// buckets reports K events after an epoch ends), and not at all for the
// epochs a resumed run starts with.
func TestPlotRefreshOncePerEpoch(t *testing.T) {
	var writes []int
	p := &plotRefresh{dir: "ckpt", plotted: 1, write: func(dir string, h []train.EpochStats) error {
		if dir != "ckpt" {
			t.Errorf("plot written to %q", dir)
		}
		writes = append(writes, len(h))
		return nil
	}}
	h := make([]train.EpochStats, 3)
	for _, n := range []int{1, 1, 1, 2, 2, 2, 2, 2, 3, 3} {
		p.after(h[:n])
	}
	if len(writes) != 2 || writes[0] != 2 || writes[1] != 3 {
		t.Fatalf("plot written for histories of %v epochs, want [2 3]", writes)
	}
}
