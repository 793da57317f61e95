package pbg

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train/model"
)

// param is one operator parameter as PBG stores it.
type param struct {
	name  string    // PBG's parameter name ("diagonal", "real", ...)
	shape []uint64  // PBG's shape
	data  []float32 // row-major
}

// staticParams splits batchprep's parameter vector p of an operator at
// dimension d into PBG's parameters (one relation, outside dynamic mode).
// The orders agree: linear is A row-major (y = A·x in both), affine A
// then b, complex_diagonal the real parts then the imaginary ones.
func staticParams(op string, p []float32, d int) ([]param, error) {
	n := uint64(d)
	switch op {
	case "none":
		return nil, nil
	case "translation":
		return []param{{"translation", []uint64{n}, p}}, nil
	case "diagonal":
		return []param{{"diagonal", []uint64{n}, p}}, nil
	case "linear":
		return []param{{"linear_transformation", []uint64{n, n}, p}}, nil
	case "affine":
		return []param{{"linear_transformation", []uint64{n, n}, p[:d*d]}, {"translation", []uint64{n}, p[d*d:]}}, nil
	case "complex_diagonal":
		return []param{{"real", []uint64{n / 2}, p[:d/2]}, {"imag", []uint64{n / 2}, p[d/2:]}}, nil
	}
	return nil, fmt.Errorf("pbg: operator %q has no PBG equivalent", op)
}

// dynamicName is the name PBG's dynamic operators give a parameter: one
// tensor for all relations, relation id first.
var dynamicName = map[string]string{
	"translation":           "translations",
	"diagonal":              "diagonals",
	"linear_transformation": "linear_transformations",
	"real":                  "real",
	"imag":                  "imag",
}

// dynamicParams stacks the parameters of every relation's side (0 rhs, 1
// lhs) into PBG's dynamic operator tensors.
func dynamicParams(m *model.Model, side, d int) ([]param, error) {
	var out []param
	for i := range m.Rels {
		ps, err := staticParams(m.Rels[i].Op.Name(), m.Params[i][side].P, d)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			for _, p := range ps {
				out = append(out, param{name: dynamicName[p.name], shape: append([]uint64{uint64(len(m.Rels))}, p.shape...)})
			}
		}
		for j, p := range ps {
			out[j].data = append(out[j].data, p.data...)
		}
	}
	return out, nil
}

// modelParams returns every parameter of m under PBG's public and private
// names, in PBG's module order: rhs operators, lhs operators, global
// embeddings.
func modelParams(m *model.Model, types []string, d int) (public, private []string, ps []param, err error) {
	add := func(pub, priv string, p param) {
		public, private, ps = append(public, pub), append(private, priv), append(ps, p)
	}
	sides := []string{"rhs", "lhs"}
	if m.S.Dynamic {
		for side, s := range sides {
			dyn, err := dynamicParams(m, side, d)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, p := range dyn {
				add(fmt.Sprintf("relations/0/operator/%s/%s", s, p.name), fmt.Sprintf("%s_operators.0.%s", s, p.name), p)
			}
		}
	} else {
		for i, r := range m.Rels {
			st, err := staticParams(r.Op.Name(), m.Params[i][0].P, d)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, p := range st {
				add(fmt.Sprintf("relations/%d/operator/rhs/%s", i, p.name), fmt.Sprintf("rhs_operators.%d.%s", i, p.name), p)
			}
		}
	}
	for t, g := range m.Global {
		add(fmt.Sprintf("entities/%s/global_embedding", types[t]), "global_embs.emb_"+types[t],
			param{"global_embedding", []uint64{uint64(d)}, g.P})
	}
	return public, private, ps, nil
}

// setParams copies PBG's parameters, by public name, into m: the inverse
// of modelParams (staticParams's slices alias m's vectors).
func setParams(m *model.Model, cfg *config.Config, read map[string][]float32) error {
	d := cfg.Dimension
	sides := []string{"rhs", "lhs"}
	for i, r := range m.Rels {
		for side := range m.Params[i] {
			if m.Params[i][side] == nil {
				continue
			}
			st, err := staticParams(r.Op.Name(), m.Params[i][side].P, d)
			if err != nil {
				return err
			}
			for _, p := range st {
				if m.S.Dynamic {
					src := read[fmt.Sprintf("relations/0/operator/%s/%s", sides[side], dynamicName[p.name])]
					copy(p.data, src[i*len(p.data):(i+1)*len(p.data)])
				} else {
					copy(p.data, read[fmt.Sprintf("relations/%d/operator/rhs/%s", i, p.name)])
				}
			}
		}
	}
	types := cfg.EntityTypes()
	for t, g := range m.Global {
		copy(g.P, read[fmt.Sprintf("entities/%s/global_embedding", types[t])])
	}
	return nil
}
