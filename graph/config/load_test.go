package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

const minimal = `
entity_path = "ent"
edge_paths = ["edges"]
checkpoint_path = "ckpt"
[entities.node]
num_partitions = 2
[[relations]]
name = "r"
lhs = "node"
rhs = "node"
`

// Invariant 5: TOML and JSON of the same config give equal structs.
func TestTOMLAndJSONAgree(t *testing.T) {
	a, err := Load("testdata/same.toml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("testdata/same.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("toml and json differ:\n%s\n%s", a.Canonical(), b.Canonical())
	}
	if string(a.Canonical()) != string(b.Canonical()) || a.Fingerprint() != b.Fingerprint() {
		t.Fatal("canonical encodings differ")
	}
	if a.Relations[0].Weight != 1 || a.Relations[0].AllNegs || a.Relations[1].Operator != "none" || a.Relations[1].Weight != 0.25 {
		t.Fatalf("relation defaults not applied: %+v", a.Relations)
	}
	if a.Seed != 42 || *a.Workers != 2 || *a.MaxNorm != 1.5 || *a.Entities["label"].Dimension != 10 {
		t.Fatalf("values lost: %s", a.Canonical())
	}
}

// Invariant 1: a PBG config dict dumped to JSON, with every key of
// ConfigSchema, loads; and every known key appears in it.
func TestPBGDumpLoads(t *testing.T) {
	c, err := Load("testdata/pbg_full.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile("testdata/pbg_full.json")
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{"seed": true, "edge_roles": true, "memory_limit": true, "checkpoint_buckets": true,
		"partition_buffer": true, "negatives": true, "degree_exponent": true, "interleave_buckets": true} // batchprep's keys, not PBG's
	for _, k := range KnownKeys() {
		if _, ok := m[k]; !ok && !ours[k] {
			t.Errorf("testdata/pbg_full.json lacks known key %q", k)
		}
	}
	if len(m) != len(KnownKeys())-len(ours) {
		t.Errorf("testdata has %d keys, schema %d (+ batchprep's %d)", len(m), len(KnownKeys()), len(ours))
	}
	if c.Dimension != 200 || c.BucketOrder != "affinity" || c.Comparator != "dot" || c.LossFn != "softmax" ||
		c.NumUniformNegs != 1000 || c.EvalFraction != 0 || c.EvalNumUniformNegs != nil || *c.EvalNumBatchNegs != 1000 || c.NumEdgeChunks != nil || len(c.EdgePaths) != 2 ||
		c.Relations[1].Operator != "diagonal" || !c.Relations[1].AllNegs || c.Entities["tag"].Dimension == nil {
		t.Fatalf("values not decoded: %s", c.Canonical())
	}
	if l, r := c.BucketShape(); l != 4 || r != 4 {
		t.Fatalf("BucketShape = %d,%d; want 4,4", l, r)
	}
	// The canonical encoding loads back to the same struct.
	back, err := Parse(c.Canonical(), "json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, back) {
		t.Fatalf("canonical round trip differs:\n%s\n%s", c.Canonical(), back.Canonical())
	}
}

// Invariant 3: defaults equal PBG's table (pbg-notes §9).
func TestDefaultsArePBGs(t *testing.T) {
	c, err := Parse([]byte(minimal), "toml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"num_epochs": 1.0, "num_edge_chunks": nil, "max_edges_per_chunk": 1e9, "bucket_order": "inside_out",
		"workers": nil, "batch_size": 1000.0, "num_batch_negs": 50.0, "num_uniform_negs": 50.0,
		"disable_lhs_negs": false, "disable_rhs_negs": false, "lr": 0.01, "relation_lr": nil,
		"eval_fraction": 0.05, "eval_num_batch_negs": 1000.0, "eval_num_uniform_negs": 1000.0,
		"hogwild_delay": 2.0, "dynamic_relations": false, "num_machines": 1.0, "num_partition_servers": -1.0,
		"distributed_init_method": nil, "distributed_tree_init_order": true, "num_groups_for_partition_server": 16.0,
		"num_groups_per_sharded_partition_server": 1.0, "partition_shard_size": 250.0, "num_gpus": 0.0,
		"background_io": false, "verbose": 0.0, "init_path": nil, "checkpoint_preservation_interval": nil,
		"init_scale": 1e-3, "global_emb": true, "comparator": "cos", "loss_fn": "ranking", "margin": 0.1,
		"regularization_coef": 0.0, "max_norm": nil, "half_precision": false, "seed": 0.0, "dimension": 0.0,
		"bias": false, "regularizer": "N3", "early_stopping": false,
	}
	var got map[string]any
	if err := json.Unmarshal(c.Canonical(), &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("default %s = %v, want %v", k, got[k], v)
		}
	}
	r := c.Relations[0]
	if r.Weight != 1 || r.Operator != "none" || r.AllNegs {
		t.Errorf("relation defaults %+v", r)
	}
	if c.NumWorkers() != runtime.NumCPU() {
		t.Errorf("NumWorkers = %d, want NumCPU %d", c.NumWorkers(), runtime.NumCPU())
	}
	w := 3
	c.Workers = &w
	if c.NumWorkers() != 3 {
		t.Errorf("NumWorkers with workers=3: %d", c.NumWorkers())
	}
}

// Invariant 2: every error names its key.
func TestErrorsNameTheKey(t *testing.T) {
	base := strings.Replace(minimal, "[entities.node]", "[entities.user]\nnum_partitions = 1\n[entities.node]", 1)
	cases := []struct{ edit, key, msg string }{
		{"foo = 1\n", "foo", "unknown key"},
		{"bucket_order = \"zigzag\"\n", "bucket_order", `"zigzag" is not one of random, affinity, inside_out, outside_in`},
		{"num_epochs = \"x\"\n", "num_epochs", "want an integer"},
		{"partition_buffer = 1\n", "partition_buffer", ">= 2"},
		{"partition_buffer = -3\n", "partition_buffer", ">= 2"},
		{"negatives = \"all\"\n", "negatives", `"all" is not one of bucket, buffer`},
		{"degree_exponent = 0.5\n", "degree_exponent", `applies to negatives = "buffer_degree" only (negatives is "")`},
		{"negatives = \"buffer\"\ndegree_exponent = 1.0\n", "degree_exponent", `(negatives is "buffer")`},
		{"negatives = \"buffer_degree\"\ndegree_exponent = 0.3\n", "degree_exponent", "0.3 is not one of 0.25, 0.5, 0.75, 1"},
		{"negatives = \"buffer_degree\"\ndegree_exponent = \"sqrt\"\n", "degree_exponent", "want a number"},
		{"num_epochs = -1\n", "num_epochs", ">= 0"},
		{"batch_size = 0\n", "batch_size", ">= 1"},
		{"eval_fraction = 1.0\n", "eval_fraction", "[0, 1)"},
		{"workers = 0\n", "workers", ">= 1"},
		{"num_edge_chunks = 0\n", "num_edge_chunks", ">= 1"},
		{"max_edges_per_chunk = 0\n", "max_edges_per_chunk", ">= 1"},
		{"seed = -1\n", "seed", "non-negative integer"},
		{"comparator = \"foo\"\n", "comparator", "not one of"},
		{"loss_fn = \"foo\"\n", "loss_fn", "not one of"},
		{"EP[\"a\", 3]", "edge_paths[1]", "want a string"},
		{"EP[]", "edge_paths", "at least one"},
		{"disable_lhs_negs = true\ndisable_rhs_negs = true\n", "disable_rhs_negs", "cannot be true"},
		{"num_machines = 2\n", "distributed_init_method", "required"},
		{"max_norm = 0.0\n", "max_norm", "> 0"},
		{"init_scale = 0.0\n", "init_scale", "> 0"},
		{"eval_num_batch_negs = -1\n", "eval_num_batch_negs", ">= 0"},
		{"margin = 0.0\n", "margin", `must be > 0 with loss_fn = "ranking"`},
		{"margin = -0.5\nloss_fn = \"ranking\"\n", "margin", "got -0.5"},
		{"eval_fraction = 0.1\neval_num_batch_negs = 0\neval_num_uniform_negs = 0\n", "eval_num_uniform_negs", "0, and eval_num_batch_negs 0, with eval_fraction = 0.1 would rank each held-out edge against no negative: set one of them >= 1"},
		{"[[relations]]\nname = \"s\"\nlhs = \"node\"\nrhs = \"node\"\nweight = 0.0\n", "relations[1].weight", "> 0"},
		{"dynamic_relations = true\n|[[relations]]\nname = \"s\"\nlhs = \"node\"\nrhs = \"node\"\n", "dynamic_relations", "exactly one relation"},
		{"[[relations]]\nname = \"s\"\nlhs = \"foo\"\nrhs = \"node\"\n", "relations[1].lhs", `unknown entity type "foo" (known: node, user)`},
		{"[[relations]]\nname = \"s\"\nlhs = \"node\"\nrhs = \"bar\"\n", "relations[1].rhs", `unknown entity type "bar"`},
		{"[[relations]]\nname = \"r\"\nlhs = \"node\"\nrhs = \"node\"\n", "relations[1].name", "also the name of relations[0]"},
		{"[[relations]]\nname = \"s\"\nlhs = \"node\"\nrhs = \"node\"\ncolour = 1\n", "relations[1].colour", "unknown key"},
		{"[[relations]]\nname = \"s\"\nlhs = \"node\"\nrhs = \"node\"\noperator = \"rot\"\n", "relations[1].operator", "not one of"},
		{"[[relations]]\nlhs = \"node\"\nrhs = \"node\"\n", "relations[1].name", "missing"},
		{"[entities.x]\nnum_partitions = 0\n", "entities.x.num_partitions", ">= 1"},
		{"[entities.x]\nnum_partitions = 2\nfoo = 1\n", "entities.x.foo", "unknown key"},
		{"[entities.x]\nfeaturized = true\n", "entities.x.num_partitions", "missing"},
		{"[entities.x]\nnum_partitions = 3\n[[relations]]\nname = \"s\"\nlhs = \"x\"\nrhs = \"user\"\n", "entities.x.num_partitions", "share one partition count"},
	}
	for _, tc := range cases {
		// Top-level keys must precede the tables in TOML.
		doc := base
		switch {
		case strings.HasPrefix(tc.edit, "EP"):
			doc = strings.Replace(base, `["edges"]`, tc.edit[2:], 1)
		case strings.Contains(tc.edit, "|"):
			pre, post, _ := strings.Cut(tc.edit, "|")
			doc = pre + base + post
		case strings.HasPrefix(tc.edit, "["):
			doc = base + tc.edit
		default:
			doc = tc.edit + base
		}
		_, err := Parse([]byte(doc), "toml")
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: err = %v, want *Error", tc.edit, err)
			continue
		}
		if ce.Key != tc.key || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "config: "+tc.key+": ") {
			t.Errorf("%q: got %q (key %q), want key %q and %q", tc.edit, err, ce.Key, tc.key, tc.msg)
		}
	}
}

// Evaluation negatives matter only with a holdout; unset ones are those of
// training (so 0 there counts).
func TestEvalNegativesNeedAHoldout(t *testing.T) {
	ok := "eval_fraction = 0.0\neval_num_batch_negs = 0\neval_num_uniform_negs = 0\n" + minimal
	if _, err := Parse([]byte(ok), "toml"); err != nil {
		t.Errorf("no holdout, no evaluation negatives: %v", err)
	}
	inherit := `{"entity_path": "e", "edge_paths": ["x"], "eval_fraction": 0.05, "num_batch_negs": 0, "num_uniform_negs": 0,
		"eval_num_batch_negs": null, "eval_num_uniform_negs": null, "entities": {"n": {"num_partitions": 1}},
		"relations": [{"name": "r", "lhs": "n", "rhs": "n"}]}`
	if _, err := Parse([]byte(inherit), "json"); err == nil || !strings.Contains(err.Error(), "eval_num_uniform_negs: 0, and eval_num_batch_negs 0") {
		t.Errorf("training's 0 negatives inherited by evaluation: %v", err)
	}
}

func TestMissingRequiredKeys(t *testing.T) {
	for _, k := range []string{"entity_path", "edge_paths", "entities", "relations"} {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"entity_path":"e","edge_paths":["x"],"checkpoint_path":"c",
			"entities":{"n":{"num_partitions":1}},"relations":[{"name":"r","lhs":"n","rhs":"n"}]}`), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, k)
		b, _ := json.Marshal(m)
		_, err := Parse(b, "json")
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != k || !strings.Contains(err.Error(), "missing") {
			t.Errorf("without %s: %v", k, err)
		}
	}
}

func TestSyntaxErrorsHaveLineAndColumn(t *testing.T) {
	_, err := Parse([]byte("{\n  \"num_epochs\": 1,\n  \"x\" 2\n}"), "")
	if err == nil || !strings.Contains(err.Error(), "line 3, column") {
		t.Errorf("json: %v", err)
	}
	_, err = Parse([]byte("entity_path = \"e\"\nedge_paths = [\n= 3\n"), "toml")
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("toml: %v", err)
	}
	_, err = Parse([]byte(`{"entity_path": "e"} {}`), "json")
	if err == nil || !strings.Contains(err.Error(), "after the top-level object") {
		t.Errorf("trailing json: %v", err)
	}
	_, err = Parse([]byte("{\"entities\": {\"n\": {\"num_partitions\": 1}},\n \"relations\": ["), "json")
	if err == nil || !strings.Contains(err.Error(), "line 2, column 15") || !strings.Contains(err.Error(), "end of file") {
		t.Errorf("truncated json: %v", err)
	}
	if _, err := Parse([]byte(`[1]`), "json"); err == nil {
		t.Error("a JSON list loaded")
	}
}

func TestLoadNamesFileAndSniffs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cfg.conf")
	if err := os.WriteFile(p, []byte(minimal+"foo = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), p+": ") {
		t.Errorf("Load error does not name the file: %v", err)
	}
	js, _ := os.ReadFile("testdata/same.json")
	p2 := filepath.Join(dir, "cfg")
	if err := os.WriteFile(p2, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p2); err != nil {
		t.Errorf("sniffed JSON: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "absent.toml")); err == nil {
		t.Error("absent file loaded")
	}
}

// Invariant 4: PBG's bucket shape rule.
func TestBucketShape(t *testing.T) {
	mk := func(parts map[string]int, rels ...[2]string) *Config {
		c := Defaults()
		c.Entities = map[string]Entity{}
		for n, p := range parts {
			c.Entities[n] = Entity{NumPartitions: p}
		}
		for i, r := range rels {
			c.Relations = append(c.Relations, Relation{Name: string(rune('a' + i)), Lhs: r[0], Rhs: r[1], Weight: 1, Operator: "none"})
		}
		c.EntityPath, c.EdgePaths, c.CheckpointPath = "e", []string{"x"}, "c"
		return c
	}
	cases := []struct {
		c    *Config
		l, r int
	}{
		{mk(map[string]int{"n": 1}, [2]string{"n", "n"}), 1, 1},
		{mk(map[string]int{"n": 4}, [2]string{"n", "n"}), 4, 4},
		{mk(map[string]int{"u": 4, "t": 1}, [2]string{"u", "t"}), 4, 1},
		{mk(map[string]int{"u": 3, "i": 5}, [2]string{"u", "i"}), 3, 5},
		{mk(map[string]int{"u": 4, "t": 1, "x": 7}, [2]string{"u", "t"}, [2]string{"t", "u"}), 4, 4},
	}
	for i, tc := range cases {
		if err := tc.c.Validate(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if l, r := tc.c.BucketShape(); l != tc.l || r != tc.r {
			t.Errorf("case %d: shape %d,%d want %d,%d", i, l, r, tc.l, tc.r)
		}
	}
}

func TestStorageFingerprint(t *testing.T) {
	a, _ := Parse([]byte(minimal), "toml")
	b, _ := Parse([]byte("num_epochs = 7\nbatch_size = 10\n"+minimal), "toml")
	if a.StorageFingerprint() != b.StorageFingerprint() {
		t.Error("training keys changed the storage fingerprint")
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("Fingerprint ignores num_epochs")
	}
	c, _ := Parse([]byte("seed = 1\n"+minimal), "toml")
	d, _ := Parse([]byte(strings.Replace(minimal, "num_partitions = 2", "num_partitions = 3", 1)), "toml")
	if c.StorageFingerprint() == a.StorageFingerprint() || d.StorageFingerprint() == a.StorageFingerprint() {
		t.Error("seed or partitions do not change the storage fingerprint")
	}
}

func TestValidateTraining(t *testing.T) {
	c, _ := Parse([]byte(minimal), "toml")
	if err := c.ValidateTraining(); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("no dimension: %v", err)
	}
	c.Dimension, c.BatchSize = 10, 120
	if err := c.ValidateTraining(); err == nil || !strings.Contains(err.Error(), "batch_size") {
		t.Errorf("batch 120 negs 50: %v", err)
	}
	c.BatchSize = 100
	if err := c.ValidateTraining(); err != nil {
		t.Error(err)
	}
}

// Invariant 10: a key given twice in one JSON object is refused, as TOML refuses it,
// naming the key's path, line and column; the same key in two objects is
// fine.
func TestJSONDuplicateKeys(t *testing.T) {
	ents := `"entities": {"n": {"num_partitions": 1}}`
	rels := `"relations": [{"name": "r", "lhs": "n", "rhs": "n"}, {"name": "s", "lhs": "n", "rhs": "n"}]`
	cases := []struct{ doc, key, msg string }{
		{"{\"entity_path\": \"e\", \"edge_paths\": [\"x\"],\n \"num_epochs\": 1,\n  \"num_epochs\": 2, " + ents + ", " + rels + "}",
			"num_epochs", `json: line 3, column 3: key "num_epochs" is given twice in one object (first at line 2, column 2)`},
		{`{"entity_path": "e", "edge_paths": ["x"], "entities": {"n": {"num_partitions": 1, "num_partitions": 2}}, ` + rels + "}",
			"entities.n.num_partitions", `key "num_partitions" is given twice`},
		{`{"entity_path": "e", "edge_paths": ["x"], ` + ents + `, "relations": [{"name": "r", "lhs": "n", "rhs": "n"}, {"name": "s", "lhs": "n", "lhs": "n", "rhs": "n"}]}`,
			"relations[1].lhs", "line 1, column 164: key \"lhs\" is given twice in one object (first at line 1, column 152)"},
		{`{"entity_path": "e", "edge_paths": ["x"], ` + ents + `, ` + rels + `, "entities": {}}`, "entities", `key "entities" is given twice`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc), "json")
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s:\ngot %v\nwant key %q and %q", c.doc, err, c.key, c.msg)
		}
	}
	if _, err := Parse([]byte(`{"entity_path": "e", "edge_paths": ["x"], `+ents+`, `+rels+`}`), "json"); err != nil {
		t.Errorf("the same keys in two relations: %v", err)
	}
}
