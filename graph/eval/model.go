package eval

import "github.com/batchprep/batchprep/graph/train/model"

// Model returns the checkpoint's model (relation operators, settings), as
// loaded by Open; the caller must not change it.
func (e *Evaluator) Model() *model.Model { return e.m }
