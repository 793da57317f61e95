package edgestore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
)

func testConfig(t *testing.T, dir string, parts, sets int) *config.Config {
	t.Helper()
	c := config.Defaults()
	c.Entities = map[string]config.Entity{"node": {NumPartitions: parts}, "tag": {NumPartitions: 1}}
	c.Relations = []config.Relation{{Name: "r0", Lhs: "node", Rhs: "node", Weight: 1, Operator: "none"},
		{Name: "r1", Lhs: "node", Rhs: "tag", Weight: 1, Operator: "none"}}
	c.EntityPath = filepath.Join(dir, "ent")
	for i := 0; i < sets; i++ {
		c.EdgePaths = append(c.EdgePaths, filepath.Join(dir, fmt.Sprintf("edges%d", i)))
	}
	c.CheckpointPath = filepath.Join(dir, "ckpt")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// stored is what a test wrote: per edge set, per bucket index, the edges.
type stored [][]graph.Edges

// writeStore writes random edges (bucket (0,1) always empty) and returns
// them.
func writeStore(t *testing.T, c *config.Config, seed uint64, weights bool, opts WriteOptions) (stored, error) {
	return writeStoreN(t, c, seed, weights, opts, 3000)
}

func writeStoreN(t *testing.T, c *config.Config, seed uint64, weights bool, opts WriteOptions, maxN int) (stored, error) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	w, err := Create(c, opts)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	for _, typ := range c.EntityTypes() {
		parts := make([][]string, c.Entities[typ].NumPartitions)
		for p := range parts {
			for i := 0; i < 3+p; i++ {
				parts[p] = append(parts[p], fmt.Sprintf("%s-%d-%d-%d", typ, seed, p, i))
			}
		}
		parts[0] = append(parts[0], "quote\"and\\back\u00e9\n")
		if err := w.WriteEntities(typ, parts); err != nil {
			return nil, err
		}
	}
	if err := w.WriteRelationNames([]string{"r0", "r1"}); err != nil {
		return nil, err
	}
	L, R := c.BucketShape()
	out := make(stored, len(c.EdgePaths))
	for s := range c.EdgePaths {
		if err := w.EdgeSet(s, fmt.Sprintf("in%d.tsv", s), weights); err != nil {
			return nil, err
		}
		out[s] = make([]graph.Edges, L*R)
		for l := 0; l < L; l++ {
			for rr := 0; rr < R; rr++ {
				n := r.IntN(maxN)
				if l == 0 && rr == 1 || r.IntN(4) == 0 {
					n = 0
				}
				e := graph.Edges{}
				for i := 0; i < n; i++ {
					e.Lhs = append(e.Lhs, r.Uint32())
					e.Rhs = append(e.Rhs, r.Uint32())
					e.Rel = append(e.Rel, r.Uint32N(2))
					e.Ordinal = append(e.Ordinal, r.Uint64())
					if weights {
						e.Weight = append(e.Weight, r.Float32()*10-5)
					}
				}
				bw, err := w.Bucket(s, graph.Bucket{Lhs: l, Rhs: rr}, int64(n))
				if err != nil {
					return nil, err
				}
				// Append in uneven pieces.
				for i := 0; i < n; {
					j := min(n, i+1+r.IntN(maxN/4+1))
					p := graph.Edges{Lhs: e.Lhs[i:j], Rhs: e.Rhs[i:j], Rel: e.Rel[i:j], Ordinal: e.Ordinal[i:j]}
					if weights {
						p.Weight = e.Weight[i:j]
					}
					if err := bw.Append(&p); err != nil {
						return nil, err
					}
					i = j
				}
				if err := bw.Close(); err != nil {
					return nil, err
				}
				out[s][l*R+rr] = e
			}
		}
	}
	return out, w.Commit()
}

// checkStore reads every bucket back whole and in ranges.
func checkStore(t *testing.T, c *config.Config, want stored) {
	t.Helper()
	st, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Verify(); err != nil {
		t.Fatal(err)
	}
	L, R := st.Partitions()
	for s := range want {
		for i, we := range want[s] {
			b := graph.Bucket{Lhs: i / R, Rhs: i % R}
			n, err := st.NumEdges(s, b)
			if err != nil || n != we.Len() {
				t.Fatalf("set %d bucket %v: NumEdges %d, %v; want %d", s, b, n, err, we.Len())
			}
			var got graph.Edges
			for begin := 0; begin < n || begin == 0; {
				end := min(n, begin+1+n/3)
				if err := st.ReadEdges(s, b, begin, end, &got); err != nil {
					t.Fatal(err)
				}
				if end == n {
					break
				}
				begin = end
			}
			if got.Len() != we.Len() || (n > 0 && !reflect.DeepEqual(got, we)) {
				t.Fatalf("set %d bucket %v: read back differs", s, b)
			}
		}
	}
	_ = L
}

// Invariants 2 and 4: a written store reads back exactly, empty buckets
// included, in whole or in ranges, with and without weights.
func TestRoundTrip(t *testing.T) {
	for _, weights := range []bool{false, true} {
		dir := t.TempDir()
		c := testConfig(t, dir, 2, 2)
		want, err := writeStoreN(t, c, 1, weights, WriteOptions{}, 60000)
		if err != nil {
			t.Fatal(err)
		}
		checkStore(t, c, want)
		for s := range c.EdgePaths {
			for l := 0; l < 2; l++ {
				for r := 0; r < 2; r++ {
					if _, err := os.Stat(filepath.Join(c.EdgePaths[s], BucketFile(l, r))); err != nil {
						t.Errorf("bucket file missing: %v", err)
					}
				}
			}
		}
		st, _ := Open(c)
		names, err := st.EntityNames("node", 0)
		if err != nil || len(names) != 4 || names[3] != "quote\"and\\back\u00e9\n" {
			t.Errorf("names %q, %v", names, err)
		}
		if n, _ := st.EntityCount("node", 1); n != 4 {
			t.Errorf("EntityCount node/1 = %d", n)
		}
		if rn, err := st.RelationNames(); err != nil || !reflect.DeepEqual(rn, []string{"r0", "r1"}) {
			t.Errorf("relation names %v %v", rn, err)
		}
		if st.HasWeights(0) != weights || st.Source(1) != "in1.tsv" {
			t.Error("edge set metadata")
		}
		// PBG's count files: the integer and a newline.
		b, _ := os.ReadFile(filepath.Join(c.EntityPath, "entity_count_node_1.txt"))
		if string(b) != "4\n" {
			t.Errorf("count file %q", b)
		}
		if err := st.ReadEdges(0, graph.Bucket{Lhs: 0, Rhs: 0}, 0, 1<<40, &graph.Edges{}); err == nil {
			t.Error("out-of-range read accepted")
		}
		st.Close()
	}
}

// Invariant 3: damage to any file is an error naming it.
func TestCorruptionNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 2, 1)
	want, err := writeStore(t, c, 2, true, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for i, e := range want[0] {
		if e.Len() > 0 {
			victim = filepath.Join(c.EdgePaths[0], BucketFile(i/2, i%2))
			break
		}
	}
	data, _ := os.ReadFile(victim)
	for _, off := range []int{5, HeaderSize + 1, len(data) - 1} {
		d := append([]byte(nil), data...)
		d[off] ^= 1
		os.WriteFile(victim, d, 0o644)
		st, err := Open(c)
		if err != nil {
			t.Fatal(err)
		}
		err = st.Verify()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victim) {
			t.Errorf("flip at %d: %v", off, err)
		}
		st.Close()
	}
	os.WriteFile(victim, data[:len(data)-4], 0o644)
	st, _ := Open(c)
	if err := st.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	os.WriteFile(victim, data, 0o644)
	names := filepath.Join(c.EntityPath, "entity_names_node_0.json")
	nb, _ := os.ReadFile(names)
	os.WriteFile(names, append(nb[:len(nb)-2], 'x', ']'), 0o644)
	st, _ = Open(c)
	if _, err := st.EntityNames("node", 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), names) {
		t.Errorf("names damage: %v", err)
	}
	man := filepath.Join(c.EdgePaths[0], EdgeManifestName)
	mb, _ := os.ReadFile(man)
	os.WriteFile(man, []byte(strings.Replace(string(mb), `"edges": `, `"edges": 1`, 1)), 0o644)
	if _, err := Open(c); err == nil || !strings.Contains(err.Error(), man) {
		t.Errorf("manifest damage: %v", err)
	}
}

// Invariant 5: the fingerprint follows the data.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 2, 1)
	if _, err := writeStore(t, c, 3, false, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := Open(c)
	b, _ := Open(c)
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("fingerprint not stable")
	}
	if _, err := writeStore(t, c, 4, false, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Fingerprint() == a.Fingerprint() {
		t.Fatal("fingerprint unchanged after new data")
	}
	c2 := *c
	c2.Seed = 9
	if _, err := Open(&c2); err == nil || !strings.Contains(err.Error(), "different config") {
		t.Errorf("config change: %v", err)
	}
}

// PBG's example layout: the edge set directories and the input inside
// entity_path. Foreign files there are kept; stale partition files of an
// earlier import are moved away.
func TestEntityPathHoldingOtherFiles(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 3, 2)
	c.EdgePaths = []string{filepath.Join(c.EntityPath, "train"), filepath.Join(c.EntityPath, "test")}
	os.MkdirAll(c.EntityPath, 0o755)
	precious := filepath.Join(c.EntityPath, "input.tsv")
	os.WriteFile(precious, []byte("keep me"), 0o644)
	if _, err := writeStore(t, c, 1, false, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c2 := testConfig(t, dir, 2, 2)
	c2.EdgePaths = c.EdgePaths
	want, err := writeStore(t, c2, 2, true, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkStore(t, c2, want)
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me" {
		t.Fatalf("foreign file: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(c.EntityPath, "entity_count_node_2.txt")); !os.IsNotExist(err) {
		t.Errorf("stale partition file left in place: %v", err)
	}
	ents, _ := os.ReadDir(c.EntityPath)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestRefusesForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 1, 1)
	os.MkdirAll(c.EdgePaths[0], 0o755)
	os.WriteFile(filepath.Join(c.EdgePaths[0], "precious.txt"), []byte("x"), 0o644)
	if _, err := Create(c, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("foreign dir: %v", err)
	}
	c.EdgePaths = append(c.EdgePaths, c.EntityPath)
	if _, err := Create(c, WriteOptions{}); err == nil {
		t.Fatal("entity_path reused as an edge path")
	}
	c = testConfig(t, t.TempDir(), 1, 1)
	c.EntityPath = filepath.Join(c.EdgePaths[0], "ent")
	if _, err := Create(c, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "inside") {
		t.Fatalf("entity_path inside an edge set: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "batchprep-tmp") {
			t.Errorf("staging dir left behind: %s", e.Name())
		}
	}
}

func TestFeaturizedRefused(t *testing.T) {
	c := testConfig(t, t.TempDir(), 1, 1)
	c.Entities["tag"] = config.Entity{NumPartitions: 1, Featurized: true}
	if _, err := Create(c, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "entities.tag: featurized") {
		t.Fatalf("%v", err)
	}
}

func TestOpenWithoutImport(t *testing.T) {
	c := testConfig(t, t.TempDir(), 1, 1)
	if _, err := Open(c); err == nil || !strings.Contains(err.Error(), "run batchprep import") {
		t.Fatalf("%v", err)
	}
}

// allSteps lists the hook steps of a write.
func allSteps(t *testing.T, parts, sets int) []string {
	var steps []string
	c := testConfig(t, t.TempDir(), parts, sets)
	if _, err := writeStore(t, c, 5, false, WriteOptions{Hook: func(s string) error { steps = append(steps, s); return nil }}); err != nil {
		t.Fatal(err)
	}
	return steps
}

// Invariant 6: a failure at any step leaves the old store intact and no
// staging directories behind.
func TestFailureAtEveryStepKeepsOldData(t *testing.T) {
	steps := allSteps(t, 2, 2)
	if len(steps) < 10 {
		t.Fatalf("steps %v", steps)
	}
	for _, step := range steps {
		if step == "cleanup" {
			continue // after the swap: the new data is in place
		}
		dir := t.TempDir()
		c := testConfig(t, dir, 2, 2)
		old, err := writeStore(t, c, 6, false, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("injected")
		_, err = writeStore(t, c, 7, true, WriteOptions{Hook: func(s string) error {
			if s == step {
				return boom
			}
			return nil
		}})
		if !errors.Is(err, boom) {
			t.Fatalf("step %s: err %v", step, err)
		}
		checkStore(t, c, old)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("step %s: left %s", step, e.Name())
			}
		}
	}
}

// Invariant 6: a crash (no rollback) at any step leaves the old store, the
// new one, or a store Open refuses; never a mix.
func TestCrashAtEveryStepIsDetected(t *testing.T) {
	for _, step := range allSteps(t, 2, 2) {
		dir := t.TempDir()
		c := testConfig(t, dir, 2, 2)
		old, err := writeStore(t, c, 8, false, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var newer stored
		newer, err = writeStore(t, c, 9, false, WriteOptions{Hook: func(s string) error {
			if s == step {
				return errSimulatedCrash
			}
			return nil
		}})
		if !errors.Is(err, errSimulatedCrash) {
			t.Fatalf("step %s: %v", step, err)
		}
		st, err := Open(c)
		switch {
		case strings.HasPrefix(step, "entity file") || step == "entity manifest":
			// Old manifest moved away, files being replaced: refused,
			// saying an import was interrupted.
			if err == nil || !strings.Contains(err.Error(), "no entity manifest: an import was interrupted here") {
				t.Errorf("step %s: half-replaced entities opened: %v", step, err)
			}
		case strings.HasPrefix(step, "rename edge_paths"):
			// The entities were swapped, this edge set was not.
			if err == nil || !strings.Contains(err.Error(), "another import") {
				t.Errorf("step %s: mixed store opened: %v", step, err)
			}
		case err != nil:
			t.Errorf("step %s: %v", step, err)
		case step == "cleanup":
			st.Close()
			checkStore(t, c, newer)
		default:
			st.Close()
			checkStore(t, c, old)
		}
	}
}

// Store is safe for concurrent use: readers racing on first use (and so on
// verification) all get the right edges.
func TestConcurrentReads(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 2, 1)
	want, err := writeStore(t, c, 12, true, WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i, we := range want[0] {
				b := graph.Bucket{Lhs: i / 2, Rhs: i % 2}
				var got graph.Edges
				if err := st.ReadEdges(0, b, 0, we.Len(), &got); err != nil {
					errs <- err
					return
				}
				if got.Len() != we.Len() || (we.Len() > 0 && !reflect.DeepEqual(got, we)) {
					errs <- fmt.Errorf("bucket %v differs", b)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
