package eval

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/plan"
)

// Unfinished says how far the checkpoint's training got when it is not
// finished (buckets and epochs done), for eval and export to print beside
// their output; it returns "" when the checkpoint holds every bucket of
// the config's num_epochs.
func (e *Evaluator) Unfinished() string {
	if e.man == nil {
		return ""
	}
	p, err := plan.New(e.store, plan.OptionsFromConfig(e.cfg))
	if err != nil {
		return ""
	}
	l, r := p.Shape()
	total := int64(e.cfg.NumEpochs) * int64(p.NumEdgeSets()) * int64(p.NumChunks()) * int64(l*r)
	if e.man.Buckets >= total {
		return ""
	}
	epochs := min(e.man.Next.Epoch, e.cfg.NumEpochs)
	return fmt.Sprintf("the checkpoint in %s is unfinished: %d of %d buckets trained, %d of %d epochs complete (run batchprep train to finish it)",
		e.cfg.CheckpointPath, e.man.Buckets, total, epochs, e.cfg.NumEpochs)
}
