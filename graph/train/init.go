package train

import "github.com/batchprep/batchprep/graph/train/model"

// Init gives the initial values of a run that has no checkpoint yet (the
// config key init_path; graph/pbg reads a PyTorch-BigGraph checkpoint).
// A partition the checkpoint does not hold is initialized from Init when
// Table returns rows for it, else drawn at random as without Init; the
// model's parameters are set by Model once, when the run starts without a
// checkpoint. The same Init files give the same run, resumed or not.
type Init interface {
	// Table returns the rows×dim initial embeddings of partition part of
	// entity type typ, or nil to draw them. It is called from the
	// goroutine that loads the next bucket's partitions ahead, so it must
	// be safe to call while the trainer runs.
	Table(typ string, part, rows, dim int) ([]float32, error)
	// Model overwrites m's initial parameters.
	Model(m *model.Model) error
}
