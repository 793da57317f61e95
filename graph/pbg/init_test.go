package pbg

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/train"
)

// Invariant 6: a PBG checkpoint as init_path starts a run from its
// embeddings and parameters: with lr = 0 the new run's checkpoint holds
// exactly the values of the run that wrote the PBG checkpoint.
func TestInitFromPBG(t *testing.T) {
	for _, tc := range []struct {
		extra string
		ops   [2]string
	}{
		{"global_emb = true\n", [2]string{"affine", "complex_diagonal"}},
		{"global_emb = false\ndynamic_relations = true\n", [2]string{"diagonal"}},
	} {
		t.Run(tc.ops[0], func(t *testing.T) {
			dir := t.TempDir()
			cfg, st := trained(t, dir, tc.extra, 2, tc.ops)
			out := filepath.Join(dir, "pbg")
			if _, err := WriteCheckpoint(out, cfg, st); err != nil {
				t.Fatal(err)
			}
			in, err := OpenInit(out, cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			c2 := *cfg
			c2.CheckpointPath = filepath.Join(dir, "ckpt2")
			c2.Lr = 0
			c2.NumEpochs = 1
			tr, err := train.New(&c2, st, train.Options{Init: in})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			a, err := eval.Open(cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			b, err := eval.Open(&c2, st)
			if err != nil {
				t.Fatal(err)
			}
			_, ea, _ := a.Entities("user")
			_, eb, _ := b.Entities("user")
			if !reflect.DeepEqual(ea, eb) {
				t.Fatalf("embeddings differ after an lr=0 run from init_path:\n%v\n%v", ea, eb)
			}
			// The parameters (not the optimizer state, which init_path does
			// not carry).
			params := func(ev *eval.Evaluator) (out [][]float32) {
				for _, ps := range ev.Model().Params {
					for _, p := range ps {
						if p != nil {
							out = append(out, p.P)
						}
					}
				}
				for _, g := range ev.Model().Global {
					out = append(out, g.P)
				}
				return out
			}
			if pa, pb := params(a), params(b); !reflect.DeepEqual(pa, pb) || len(pa) == 0 {
				t.Fatalf("model parameters differ after an lr=0 run from init_path:\n%v\n%v", pa, pb)
			}
			// Without init_path the run starts elsewhere (the test can fail).
			c3 := c2
			c3.CheckpointPath = filepath.Join(dir, "ckpt3")
			tr, _ = train.New(&c3, st, train.Options{})
			tr.Run(context.Background())
			c, _ := eval.Open(&c3, st)
			if _, ec, _ := c.Entities("user"); reflect.DeepEqual(ea, ec) {
				t.Fatal("a run without init_path has the same embeddings")
			}
		})
	}
}

// A PBG checkpoint that does not fit the config is refused, naming the
// file; a missing partition file is drawn at random as PBG does.
func TestInitFromPBGErrors(t *testing.T) {
	dir := t.TempDir()
	cfg, st := trained(t, dir, "global_emb = true\n", 2, [2]string{"translation", "diagonal"})
	out := filepath.Join(dir, "pbg")
	if _, err := WriteCheckpoint(out, cfg, st); err != nil {
		t.Fatal(err)
	}
	in, _ := OpenInit(out, cfg, st)
	if emb, err := in.Table("user", 0, 3, 4); err == nil || !strings.Contains(err.Error(), "embeddings_user_0.v2.h5 holds embeddings of shape [") {
		t.Fatalf("wrong shape: %v %v", emb, err)
	}
	os.Remove(filepath.Join(out, "embeddings_user_1.v2.h5"))
	n, _ := st.EntityCount("user", 1)
	if emb, err := in.Table("user", 1, n, 4); emb != nil || err != nil {
		t.Fatalf("missing file: %v %v, want nil, nil", emb, err)
	}
	// A config with another operator does not match the model file.
	c2 := *cfg
	c2.Relations = append(c2.Relations[:0:0], c2.Relations...)
	c2.Relations[0].Operator = "linear"
	m, err := train.NewModel(&c2, st.NumRelations())
	if err != nil {
		t.Fatal(err)
	}
	in2, _ := OpenInit(out, &c2, st)
	if err := in2.Model(m); err == nil || !strings.Contains(err.Error(), "model.v2.h5 has no relations/0/operator/rhs/linear_transformation") {
		t.Fatalf("other operator: %v", err)
	}
	os.Remove(filepath.Join(out, VersionFile))
	if _, err := OpenInit(out, cfg, st); err == nil || !strings.Contains(err.Error(), "no PyTorch-BigGraph checkpoint") {
		t.Fatalf("no version file: %v", err)
	}
}
