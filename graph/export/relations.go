package export

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/train/model"
)

// Relations returns the operator parameters of m's relations, named by
// names (one per relation id), with their entity types (typeNames indexed
// as m's type indexes: the config's sorted entity types), in id order: side "rhs" (the operator
// applied to the rhs entity; the only one outside dynamic mode), then,
// with dynamic relations, side "lhs" (applied to the lhs entity when the
// rhs is ranked). Parameters by operator, at dimension d (invariant 3):
//
//	none              (none)
//	translation       t (d): y = x + t
//	diagonal          a (d): y = x ⊙ a
//	complex_diagonal  re(a) (d/2), then im(a) (d/2): y = x·a per complex
//	                  coordinate, x's real parts first, imaginary second
//	linear            A (d×d, row-major): y = A·x
//	affine            A (d×d, row-major), then b (d): y = A·x + b
func Relations(m *model.Model, names, typeNames []string) ([]Relation, error) {
	if len(names) != len(m.Rels) {
		return nil, fmt.Errorf("export: %d relation names for %d relations", len(names), len(m.Rels))
	}
	var out []Relation
	for i, r := range m.Rels {
		for side, p := range m.Params[i] {
			if p == nil {
				continue
			}
			out = append(out, Relation{Name: names[i], Lhs: typeNames[r.Lhs], Rhs: typeNames[r.Rhs],
				Side: [2]string{"rhs", "lhs"}[side], Operator: r.Op.Name(), Params: append([]float32(nil), p.P...)})
		}
	}
	return out, nil
}
