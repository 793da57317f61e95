package train

import "github.com/batchprep/batchprep/graph/train/model"

// Init gives the initial values of a run that has no checkpoint yet (the
// config key init_path; graph/pbg reads a PyTorch-BigGraph checkpoint).
// A partition the checkpoint does not hold is drawn at random as without
// Init, then Fill overwrites the rows Init holds values for; the model's
// parameters are set by Model once, when the run starts without a
// checkpoint. The same Init files give the same run, resumed or not.
type Init interface {
	// Fill overwrites rows of emb, the rows×dim initial embeddings of
	// partition part of entity type typ (drawn at random), with the
	// values Init holds for them; the other rows stay as drawn. It is
	// called from the goroutine that loads the next bucket's partitions
	// ahead, so it must be safe to call while the trainer runs.
	Fill(typ string, part int, emb []float32, dim int) error
	// Model overwrites m's initial parameters.
	Model(m *model.Model) error
}
