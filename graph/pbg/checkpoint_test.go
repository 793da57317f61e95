package pbg

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/export"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/hdf5"
)

// trained imports a small two-type graph into dir, trains it briefly and
// returns the config and the open store. extra is TOML put before the
// tables; ops are the operators of the relations "likes" and "knows"
// (dynamic mode uses the first).
func trained(t *testing.T, dir, extra string, parts int, ops [2]string) (*config.Config, *edgestore.Store) {
	t.Helper()
	var sb strings.Builder
	for i := range 12 {
		fmt.Fprintf(&sb, "u%d\tknows\tu%d\n", i, (i+1)%12)
		fmt.Fprintf(&sb, "u%d\tlikes\tu%d\n", i, (i+5)%12)
	}
	tsv := filepath.Join(dir, "edges.tsv")
	os.WriteFile(tsv, []byte(sb.String()), 0o644)
	text := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 4
num_epochs = 2
batch_size = 4
num_batch_negs = 4
num_uniform_negs = 4
lr = 0.1
eval_fraction = 0
workers = 1
%s
[entities.user]
num_partitions = %d

[[relations]]
name = "likes"
lhs = "user"
rhs = "user"
operator = %q
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"), extra, parts, ops[0])
	if !strings.Contains(extra, "dynamic_relations = true") {
		text += fmt.Sprintf("\n[[relations]]\nname = \"knows\"\nlhs = \"user\"\nrhs = \"user\"\noperator = %q\n", ops[1])
	}
	cfgPath := filepath.Join(dir, "config.toml")
	os.WriteFile(cfgPath, []byte(text), 0o644)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tr, err := train.New(cfg, st, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return cfg, st
}

func openH5(t *testing.T, path string) *hdf5.File {
	t.Helper()
	f, err := hdf5.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	root, err := f.Root()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := root.Attr("format_version"); err != nil || v != int64(1) {
		t.Fatalf("%s: format_version %v %v", path, v, err)
	}
	return f
}

func floats(t *testing.T, f *hdf5.File, path string, shape []uint64) []float32 {
	t.Helper()
	o, err := f.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := o.Shape()
	if err != nil || !reflect.DeepEqual(s, shape) {
		t.Fatalf("%s: shape %v (%v), want %v", path, s, err, shape)
	}
	v, err := o.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Invariants 1, 2 and 3: every partition's rows plus the global
// embedding are the export's embeddings, the operators are the export's
// parameters under PBG's names and shapes.
func TestWriteCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		extra string
		parts int
		ops   [2]string
		want  map[string][]uint64 // model datasets and shapes
	}{
		{"global_emb = true\n", 2, [2]string{"affine", "complex_diagonal"}, map[string][]uint64{
			"relations/0/operator/rhs/linear_transformation": {4, 4}, "relations/0/operator/rhs/translation": {4},
			"relations/1/operator/rhs/real": {2}, "relations/1/operator/rhs/imag": {2},
			"entities/user/global_embedding": {4}}},
		{"global_emb = false\n", 1, [2]string{"translation", "none"}, map[string][]uint64{
			"relations/0/operator/rhs/translation": {4}}},
		{"global_emb = false\ndynamic_relations = true\n", 1, [2]string{"linear"}, map[string][]uint64{
			"relations/0/operator/rhs/linear_transformations": {2, 4, 4},
			"relations/0/operator/lhs/linear_transformations": {2, 4, 4}}},
	} {
		t.Run(fmt.Sprint(tc.ops), func(t *testing.T) {
			dir := t.TempDir()
			cfg, st := trained(t, dir, tc.extra, tc.parts, tc.ops)
			out := filepath.Join(dir, "pbg")
			sum, err := WriteCheckpoint(out, cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Version != 2 || sum.Entities != 12 {
				t.Fatalf("summary %+v, want version 2 (2 epochs), 12 entities", sum)
			}
			if b, err := os.ReadFile(filepath.Join(out, VersionFile)); err != nil || string(b) != "2\n" {
				t.Fatalf("%s: %q %v", VersionFile, b, err)
			}
			ev, err := eval.Open(cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			names, want, _ := ev.Entities("user")
			mf := openH5(t, filepath.Join(out, "model.v2.h5"))
			var global []float32
			if cfg.GlobalEmb {
				global = floats(t, mf, "model/entities/user/global_embedding", []uint64{4})
			}
			var got []float32
			var gotNames []string
			for p := range tc.parts {
				n, _ := st.EntityCount("user", p)
				f := openH5(t, filepath.Join(out, fmt.Sprintf("embeddings_user_%d.v2.h5", p)))
				emb := floats(t, f, "embeddings", []uint64{uint64(n), 4})
				for i, x := range emb {
					if global != nil {
						x += global[i%4]
					}
					got = append(got, x)
				}
				var nm []string
				b, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("entity_names_user_%d.json", p)))
				if err := json.Unmarshal(b, &nm); err != nil || len(nm) != n {
					t.Fatalf("entity names of partition %d: %v %v", p, nm, err)
				}
				gotNames = append(gotNames, nm...)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotNames, names) {
				t.Fatalf("embeddings + global differ from the export:\n%v %v\n%v %v", gotNames, got, names, want)
			}
			root, _ := mf.Get("model")
			seen := map[string][]uint64{}
			var walk func(o *hdf5.Object)
			walk = func(o *hdf5.Object) {
				ms, err := o.Members()
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					c, _ := o.Child(m)
					if c.IsGroup() {
						walk(c)
						continue
					}
					s, _, _ := c.Shape()
					seen[strings.TrimPrefix(c.Name, "model/")] = s
					key, err := c.Attr("state_dict_key")
					if err != nil || key == "" {
						t.Errorf("%s: state_dict_key %v %v", c.Name, key, err)
					}
				}
			}
			walk(root)
			if !reflect.DeepEqual(seen, tc.want) {
				t.Fatalf("model datasets %v, want %v", seen, tc.want)
			}
			// The parameters are the export's, in the same order.
			relNames, _ := st.RelationNames()
			rels, err := export.Relations(ev.Model(), relNames, cfg.EntityTypes())
			if err != nil {
				t.Fatal(err)
			}
			public, _, ps, _ := modelParams(ev.Model(), cfg.EntityTypes(), 4)
			var flat, wantFlat []float32
			for i, p := range ps {
				if p.name != "global_embedding" {
					flat = append(flat, floats(t, mf, "model/"+public[i], p.shape)...)
				}
			}
			// Dynamic mode stacks every relation's rhs parameters, then
			// every relation's lhs ones.
			for _, side := range []string{"rhs", "lhs"} {
				for _, r := range rels {
					if r.Side == side {
						wantFlat = append(wantFlat, r.Params...)
					}
				}
			}
			if !reflect.DeepEqual(flat, wantFlat) {
				t.Fatalf("operator parameters %v, want %v", flat, wantFlat)
			}
			var pc map[string]any
			b, _ := os.ReadFile(filepath.Join(out, "config.json"))
			if err := json.Unmarshal(b, &pc); err != nil {
				t.Fatal(err)
			}
			for _, k := range ours {
				if _, ok := pc[k]; ok {
					t.Errorf("config.json has batchprep's key %s", k)
				}
			}
			if abs, _ := filepath.Abs(out); pc["checkpoint_path"] != abs || pc["entity_path"] != abs {
				t.Errorf("config.json paths %v %v, want %s", pc["checkpoint_path"], pc["entity_path"], abs)
			}
		})
	}
}

// The version counts the iterations trained: raising num_epochs after a
// finished run leaves it at the epochs trained, and the run unfinished.
func TestWriteCheckpointVersion(t *testing.T) {
	dir := t.TempDir()
	cfg, st := trained(t, dir, "global_emb = false\n", 2, [2]string{"diagonal", "none"})
	c2 := *cfg
	c2.NumEpochs = 5
	sum, err := WriteCheckpoint(filepath.Join(dir, "pbg"), &c2, st)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Version != 2 || sum.Finished {
		t.Fatalf("summary %+v, want version 2, unfinished", sum)
	}
	if sum, _ := WriteCheckpoint(filepath.Join(dir, "pbg"), cfg, st); sum.Version != 2 || !sum.Finished {
		t.Fatalf("summary %+v, want version 2, finished", sum)
	}
}
