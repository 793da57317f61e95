package export

import (
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/eval"
)

// FromCheckpoint returns the export of the checkpoint ev holds, made with
// cfg: every entity type's embeddings (sorted types), the comparator, and
// the relations' parameters named by relNames (the store's relation names
// by id).
func FromCheckpoint(cfg *config.Config, ev *eval.Evaluator, relNames []string) (*Model, error) {
	m := &Model{Comparator: cfg.Comparator}
	for _, typ := range cfg.EntityTypes() {
		names, emb, err := ev.Entities(typ)
		if err != nil {
			return nil, err
		}
		m.Types = append(m.Types, Type{Name: typ, Names: names, Dim: cfg.Dimension, Emb: emb})
	}
	var err error
	m.Relations, err = Relations(ev.Model(), relNames, cfg.EntityTypes())
	if err != nil {
		return nil, err
	}
	return m, nil
}
