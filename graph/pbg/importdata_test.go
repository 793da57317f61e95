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

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/internal/hdf5"
)

const importConfig = `entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 4

[entities.user]
num_partitions = %d

[entities.item]
num_partitions = 1

[[relations]]
name = "buys"
lhs = "user"
rhs = "item"

[[relations]]
name = "follows"
lhs = "user"
rhs = "user"
`

func importCfg(t *testing.T, dir string, userParts int) *config.Config {
	t.Helper()
	p := filepath.Join(dir, "c.toml")
	text := fmt.Sprintf(importConfig, filepath.Join(dir, "ent"), filepath.Join(dir, "train"), filepath.Join(dir, "ckpt"), userParts)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Invariant 5: PBG's data written by h5py (testdata/gen.py: chunked
// datasets, an int64 weight column in one bucket, a missing empty bucket)
// becomes a store with the same entities, partitions, offsets, relations
// and edges, in file order.
func TestImportPBGData(t *testing.T) {
	dir := t.TempDir()
	cfg := importCfg(t, dir, 2)
	src := filepath.Join("testdata", "pbgdata")
	rep, err := Import(context.Background(), cfg, src, []string{filepath.Join(src, "train")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entities["user"] != 5 || rep.Entities["item"] != 4 || rep.Edges[0] != 14 || rep.Buckets[0] != 3 || !rep.Weights[0] {
		t.Fatalf("report %+v", rep)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for p, want := range [][]string{{"ann", "bob", "cy"}, {"dee", "éva"}} {
		if got, err := st.EntityNames("user", p); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("user partition %d: %v %v, want %v", p, got, err, want)
		}
	}
	if rels, _ := st.RelationNames(); !reflect.DeepEqual(rels, []string{"buys", "follows"}) {
		t.Fatalf("relations %v", rels)
	}
	var expected map[string]map[string][]int64
	b, _ := os.ReadFile(filepath.Join("testdata", "expected.json"))
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	var ordinal uint64
	for l := range 2 {
		for r := range 2 {
			want := expected[fmt.Sprintf("%d_%d", l, r)]
			n, err := st.NumEdges(0, graph.Bucket{Lhs: l, Rhs: r})
			if err != nil || n != len(want["rel"]) {
				t.Fatalf("bucket (%d,%d): %d edges (%v), want %d", l, r, n, err, len(want["rel"]))
			}
			var e graph.Edges
			if err := st.ReadEdges(0, graph.Bucket{Lhs: l, Rhs: r}, 0, n, &e); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				w := float32(1)
				if want["weight"] != nil {
					w = float32(want["weight"][i])
				}
				if int64(e.Lhs[i]) != want["lhs"][i] || int64(e.Rhs[i]) != want["rhs"][i] || int64(e.Rel[i]) != want["rel"][i] ||
					e.Weight[i] != w || e.Ordinal[i] != ordinal {
					t.Fatalf("bucket (%d,%d) edge %d: %d %d %d w %v ord %d, want %v w %v ord %d", l, r, i,
						e.Lhs[i], e.Rhs[i], e.Rel[i], e.Weight[i], e.Ordinal[i], want, w, ordinal)
				}
				ordinal++
			}
		}
	}
}

// A config whose partition counts differ from PBG's, an offset outside
// its partition, and names that do not match the count are errors naming
// the file.
func TestImportPBGErrors(t *testing.T) {
	src := filepath.Join("testdata", "pbgdata")
	dir := t.TempDir()
	_, err := Import(context.Background(), importCfg(t, dir, 1), src, []string{filepath.Join(src, "train")})
	if err == nil || !strings.Contains(err.Error(), "entity_count_user_1.txt exists but entities.user.num_partitions is 1") {
		t.Fatalf("partition mismatch: %v", err)
	}
	// A copy whose user partition 1 lost a name.
	bad := filepath.Join(t.TempDir(), "pbg")
	copyDir(t, src, bad)
	// A bucket file beyond the config's buckets.
	extra := filepath.Join(bad, "train", "edges_2_0.h5")
	os.WriteFile(extra, nil, 0o644)
	_, err = Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")})
	if err == nil || !strings.Contains(err.Error(), "edges_2_0.h5 is outside the config's 2x2 buckets") {
		t.Fatalf("extra bucket: %v", err)
	}
	os.Remove(extra)
	os.WriteFile(filepath.Join(bad, "entity_names_user_1.json"), []byte(`["dee"]`), 0o644)
	_, err = Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")})
	if err == nil || !strings.Contains(err.Error(), "entity_names_user_1.json holds 1 names") {
		t.Fatalf("names/count mismatch: %v", err)
	}
	// Now the count agrees, and bucket (0,1)'s first rhs offset, 1, is outside.
	os.WriteFile(filepath.Join(bad, "entity_count_user_1.txt"), []byte("1\n"), 0o644)
	_, err = Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")})
	if err == nil || !strings.Contains(err.Error(), "edges_0_1.h5: row 0: rhs offset 1 outside partition 1 of user (1 entities)") {
		t.Fatalf("offset outside: %v", err)
	}
	// A 2-D lhs dataset.
	copyDir(t, src, bad)
	writeBucket(t, filepath.Join(bad, "train", "edges_0_0.h5"), hdf5.Int64, []uint64{1, 1}, []uint64{1})
	_, err = Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")})
	if err == nil || !strings.Contains(err.Error(), "lhs is int64 of shape [1 1], want a 1-D integer dataset") {
		t.Fatalf("2-D lhs: %v", err)
	}
	// int32 columns are read too.
	writeBucket(t, filepath.Join(bad, "train", "edges_0_0.h5"), hdf5.Int32, []uint64{1}, []uint64{1})
	if _, err := Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")}); err != nil {
		t.Fatalf("int32 columns: %v", err)
	}
	// A damaged bucket file.
	copyDir(t, src, bad)
	f := filepath.Join(bad, "train", "edges_0_0.h5")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, b[:len(b)/3], 0o644)
	_, err = Import(context.Background(), importCfg(t, t.TempDir(), 2), bad, []string{filepath.Join(bad, "train")})
	if err == nil || !strings.Contains(err.Error(), "edges_0_0.h5") {
		t.Fatalf("truncated bucket: %v", err)
	}
}

// writeBucket writes a one-edge bucket (lhs 2, rhs 1, relation 1) with
// columns of type typ; lhs has shape lhsShape.
func writeBucket(t *testing.T, path string, typ hdf5.Type, lhsShape, shape []uint64) {
	t.Helper()
	val := func(v int64) []byte {
		b := make([]byte, typ.Size)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b
	}
	tr := hdf5.NewTree()
	tr.Root().SetAttr("format_version", int64(1))
	tr.Root().Dataset("lhs", typ, lhsShape, hdf5.Bytes(val(2)))
	tr.Root().Dataset("rhs", typ, shape, hdf5.Bytes(val(1)))
	tr.Root().Dataset("rel", typ, shape, hdf5.Bytes(val(1)))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := tr.WriteTo(f); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
