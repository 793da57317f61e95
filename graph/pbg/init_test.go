package pbg

import (
	"context"
	"fmt"
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
			in, err := OpenInit(out, cfg, st, InitOptions{})
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
	in, _ := OpenInit(out, cfg, st, InitOptions{})
	n0, _ := st.EntityCount("user", 0)
	if err := in.Fill("user", 0, make([]float32, n0*3), 3); err == nil || !strings.Contains(err.Error(), "embeddings_user_0.v2.h5 holds embeddings of shape [") {
		t.Fatalf("wrong dimension: %v", err)
	}
	os.Remove(filepath.Join(out, "embeddings_user_1.v2.h5"))
	n, _ := st.EntityCount("user", 1)
	emb := make([]float32, n*4)
	for i := range emb {
		emb[i] = 7
	}
	if err := in.Fill("user", 1, emb, 4); err != nil || emb[0] != 7 || emb[len(emb)-1] != 7 {
		t.Fatalf("missing file: %v %v, want the rows untouched", emb, err)
	}
	// A config with another operator does not match the model file.
	c2 := *cfg
	c2.Relations = append(c2.Relations[:0:0], c2.Relations...)
	c2.Relations[0].Operator = "linear"
	m, err := train.NewModel(&c2, st.NumRelations())
	if err != nil {
		t.Fatal(err)
	}
	in2, _ := OpenInit(out, &c2, st, InitOptions{})
	if err := in2.Model(m); err == nil || !strings.Contains(err.Error(), "model.v2.h5 has no relations/0/operator/rhs/linear_transformation") {
		t.Fatalf("other operator: %v", err)
	}
	os.Remove(filepath.Join(out, VersionFile))
	if _, err := OpenInit(out, cfg, st, InitOptions{}); err == nil || !strings.Contains(err.Error(), "no PyTorch-BigGraph checkpoint") {
		t.Fatalf("no version file: %v", err)
	}
}

// Invariant 6: rows are placed by name. A store with another seed and one
// partition instead of two gets, for each entity, the checkpoint's row of
// that name; a store entity the checkpoint does not name is refused unless
// AllowUnmatched (its row then stays as drawn); no name in common is
// refused either way.
func TestInitByName(t *testing.T) {
	dir := t.TempDir()
	cfg, st := trained(t, dir, "global_emb = false\n", 2, [2]string{"translation", "diagonal"})
	out := filepath.Join(dir, "pbg")
	if _, err := WriteCheckpoint(out, cfg, st); err != nil {
		t.Fatal(err)
	}
	a, err := eval.Open(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	names, emb, _ := a.Entities("user")
	want := map[string][]float32{}
	for i, n := range names {
		want[n] = emb[i*4 : (i+1)*4]
	}
	dir2 := t.TempDir()
	cfg2, st2 := trained(t, dir2, "global_emb = false\nseed = 1\n", 1, [2]string{"translation", "diagonal"})
	ours, _ := st2.EntityNames("user", 0)
	fill := func(opts InitOptions) ([]float32, error) {
		in, err := OpenInit(out, cfg2, st2, opts)
		if err != nil {
			return nil, err
		}
		if r := in.Report(); len(r.Types) != 1 || r.NamesDir != out {
			t.Fatalf("report %+v", r)
		}
		got := make([]float32, len(ours)*4)
		for i := range got {
			got[i] = 9
		}
		return got, in.Fill("user", 0, got, 4)
	}
	got, err := fill(InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i, n := range ours {
		if !reflect.DeepEqual(got[i*4:(i+1)*4], want[n]) {
			t.Fatalf("%s: row %v, want the checkpoint's %v", n, got[i*4:(i+1)*4], want[n])
		}
		if i < len(names) && names[i] == n {
			same++
		}
	}
	if same == len(ours) {
		t.Fatal("the two stores have the same order: the test cannot fail")
	}
	// One name of the checkpoint changed: that store entity is unmatched.
	path := filepath.Join(out, "entity_names_user_0.json")
	orig, _ := os.ReadFile(path)
	first, _ := st.EntityNames("user", 0)
	os.WriteFile(path, []byte(strings.Replace(string(orig), `"`+first[0]+`"`, `"nobody"`, 1)), 0o644)
	if _, err := fill(InitOptions{}); err == nil || !strings.Contains(err.Error(), `1 of the store's 12 entities have no row in the checkpoint (user: 1 of 12, e.g. "`+first[0]+`"`) {
		t.Fatalf("one unmatched: %v", err)
	}
	got, err = fill(InitOptions{AllowUnmatched: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ours {
		row := got[i*4 : (i+1)*4]
		if n == first[0] && !reflect.DeepEqual(row, []float32{9, 9, 9, 9}) || n != first[0] && !reflect.DeepEqual(row, want[n]) {
			t.Fatalf("AllowUnmatched: %s has row %v", n, row)
		}
	}
	// No name in common.
	for p := range 2 {
		path := filepath.Join(out, fmt.Sprintf("entity_names_user_%d.json", p))
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.ReplaceAll(string(b), `"u`, `"v`)), 0o644)
	}
	if _, err := fill(InitOptions{AllowUnmatched: true}); err == nil || !strings.Contains(err.Error(), "no entity matches by name") {
		t.Fatalf("nothing matches: %v", err)
	}
}
