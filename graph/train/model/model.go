package model

import (
	"fmt"
	"math/rand/v2"
)

// Settings are the model's config keys (PBG's names in the comments).
type Settings struct {
	Dim            int     // dimension
	Comparator     string  // comparator
	Loss           string  // loss_fn
	Margin         float64 // margin (ranking)
	NumBatchNegs   int     // num_batch_negs: positives per chunk, whose other positives are negatives
	NumUniformNegs int     // num_uniform_negs: uniform negatives per chunk
	// DegreeNegs (ours) replaces the batch negatives (NumBatchNegs is 0
	// then): chunks of DegreeNegs positives share as many negatives drawn
	// by degree from the pools of StepPools, besides the uniform ones.
	DegreeNegs     int
	DisableLhsNegs bool    // disable_lhs_negs
	DisableRhsNegs bool    // disable_rhs_negs
	RegCoef        float64 // regularization_coef (N3)
	Lr, RelationLr float32 // lr, relation_lr (already defaulted to lr)
	GlobalEmb      bool    // global_emb
	Dynamic        bool    // dynamic_relations
}

// Relation is one relation type as the model uses it.
type Relation struct {
	Op       Operator
	Weight   float32 // relations[i].weight
	AllNegs  bool    // relations[i].all_negs
	Lhs, Rhs int     // entity type indexes
}

// Model is the shared, trainable part besides the entity tables: each
// relation's operator parameters (side 0 applies to the rhs; in dynamic
// mode side 1 applies to the lhs when the rhs is corrupted) and, with
// global_emb, one vector per entity type added to all its embeddings.
type Model struct {
	S      Settings
	Rels   []Relation
	Params [][2]*Dense // [relation][side]; side 1 nil outside dynamic mode
	Global []*Dense    // per entity type; nil without global_emb
}

// New returns a model with initial parameters: identity-like operators and
// zero global embeddings.
func New(s Settings, rels []Relation, numTypes int) (*Model, error) {
	if s.Dim < 1 {
		return nil, fmt.Errorf("dimension = %d: must be >= 1", s.Dim)
	}
	if _, err := NewComparator(s.Comparator); err != nil {
		return nil, err
	}
	if _, err := NewLoss(s.Loss, s.Margin); err != nil {
		return nil, err
	}
	if s.DisableLhsNegs && s.DisableRhsNegs {
		return nil, fmt.Errorf("disable_lhs_negs and disable_rhs_negs cannot both be true")
	}
	m := &Model{S: s, Rels: rels, Params: make([][2]*Dense, len(rels))}
	for i, r := range rels {
		sides := 1
		if s.Dynamic {
			sides = 2
		}
		for side := 0; side < sides; side++ {
			d := NewDense(r.Op.NumParams(s.Dim))
			r.Op.Init(d.P, s.Dim)
			m.Params[i][side] = d
		}
	}
	if s.GlobalEmb {
		m.Global = make([]*Dense, numTypes)
		for t := range m.Global {
			m.Global[t] = NewDense(s.Dim)
		}
	}
	return m, nil
}

// Batch is the edges of one batch: entity offsets in the bucket's lhs and
// rhs partitions, relation ids, and weights (nil: all 1).
type Batch struct {
	Lhs, Rhs, Rel []uint32
	Weight        []float32
}

// Uniform draws k entity rows of n, uniformly with replacement, into dst.
func Uniform(dst []uint32, k, n int, rng *rand.Rand) []uint32 {
	dst = dst[:0]
	for range k {
		dst = append(dst, uint32(rng.IntN(n)))
	}
	return dst
}
