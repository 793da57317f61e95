package train

import (
	"fmt"
	"strings"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Store is what training reads: the edges and the entity counts
// (edgestore.Store implements it).
type Store interface {
	graph.Reader
	EntityCount(typ string, part int) (int, error)
	NumRelations() int
	Fingerprint() string
}

// unsupported names the config keys whose non-default values this trainer
// does not implement yet; they are refused rather than ignored.
func unsupported(cfg *config.Config) error {
	for name, e := range cfg.Entities {
		if e.Featurized {
			return fmt.Errorf("train: entities.%s: featurized entity types are not supported", name)
		}
		if e.Dimension != nil && *e.Dimension != cfg.Dimension {
			return fmt.Errorf("train: entities.%s.dimension = %d: per-type dimensions are not supported (dimension = %d)", name, *e.Dimension, cfg.Dimension)
		}
	}
	switch {
	case cfg.Bias:
		return fmt.Errorf("train: bias = true is not supported")
	case cfg.MaxNorm != nil:
		return fmt.Errorf("train: max_norm is not supported")
	case cfg.HalfPrecision:
		return fmt.Errorf("train: half_precision = true is not supported")
	case cfg.NumMachines > 1:
		return fmt.Errorf("train: num_machines = %d: distributed training is not supported", cfg.NumMachines)
	case cfg.RegularizationCoef > 0 && cfg.Regularizer != "N3":
		return fmt.Errorf("train: regularizer = %q: only N3 is supported", cfg.Regularizer)
	}
	return nil
}

// NewModel builds the model a config describes, with initial parameters;
// numRelations is the store's relation count (dynamic mode: the dynamic
// relations, which share relations[0]'s settings).
func NewModel(cfg *config.Config, numRelations int) (*model.Model, error) {
	if err := cfg.ValidateTraining(); err != nil {
		return nil, err
	}
	if err := unsupported(cfg); err != nil {
		return nil, err
	}
	types := cfg.EntityTypes()
	idx := map[string]int{}
	for i, t := range types {
		idx[t] = i
	}
	var rels []model.Relation
	add := func(i int, r config.Relation) error {
		op, err := model.NewOperator(r.Operator, cfg.Dimension)
		if err != nil {
			return fmt.Errorf("train: relations[%d].operator: %w", i, err)
		}
		rels = append(rels, model.Relation{Op: op, Weight: float32(r.Weight), AllNegs: r.AllNegs, Lhs: idx[r.Lhs], Rhs: idx[r.Rhs]})
		return nil
	}
	if cfg.DynamicRelations {
		for range max(numRelations, 1) {
			if err := add(0, cfg.Relations[0]); err != nil {
				return nil, err
			}
		}
	} else {
		for i, r := range cfg.Relations {
			if err := add(i, r); err != nil {
				return nil, err
			}
		}
	}
	relLr := cfg.Lr
	if cfg.RelationLr != nil {
		relLr = *cfg.RelationLr
	}
	s := model.Settings{Dim: cfg.Dimension, Comparator: cfg.Comparator, Loss: cfg.LossFn, Margin: cfg.Margin,
		NumBatchNegs: cfg.NumBatchNegs, NumUniformNegs: cfg.NumUniformNegs, DisableLhsNegs: cfg.DisableLhsNegs,
		DisableRhsNegs: cfg.DisableRhsNegs, RegCoef: cfg.RegularizationCoef, Lr: float32(cfg.Lr),
		RelationLr: float32(relLr), GlobalEmb: cfg.GlobalEmb, Dynamic: cfg.DynamicRelations}
	if cfg.DegreeNegatives() {
		s.DegreeNegs, s.NumBatchNegs = cfg.NumBatchNegs, 0
	}
	m, err := model.New(s, rels, len(types))
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return m, nil
}

// partOf is the partition an entity type uses on one side of bucket b's
// coordinate: the coordinate when the type is partitioned, else 0.
func partOf(cfg *config.Config, typ string, coord int) int {
	if cfg.Entities[typ].NumPartitions > 1 {
		return coord
	}
	return 0
}

// LoadModel builds the config's model and reads its parameters from the
// checkpoint described by man in dir, refusing a checkpoint made with a
// different config (ErrCheckpoint naming the differing keys).
func LoadModel(cfg *config.Config, numRelations int, storeFingerprint, dir string, man *Manifest) (*model.Model, error) {
	if diff := DiffFingerprints(man.Fingerprint, Fingerprint(cfg, storeFingerprint)); len(diff) > 0 {
		return nil, fmt.Errorf("%w: %s was made with a different config:\n  %s", ErrCheckpoint, dir, strings.Join(diff, "\n  "))
	}
	m, err := NewModel(cfg, numRelations)
	if err != nil {
		return nil, err
	}
	data, err := readRef(dir, man.Model)
	if err != nil {
		return nil, err
	}
	if err := decodeModelInto(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCheckpoint, man.Model.File, err)
	}
	return m, nil
}
