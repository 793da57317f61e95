package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edgeSetsFixture imports Nations' train, valid and test files as three
// edge sets with roles (one dictionary over all three), with an entity
// that only valid names, and returns the config path.
func edgeSetsFixture(t *testing.T, roles string) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := nationsFS.ReadFile("kgdata/nations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "valid.txt" {
			data = append(data, "atlantis\tembassy\tusa\n"...)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	cfgPath = filepath.Join(dir, "c.toml")
	cfg := fmt.Sprintf(`entity_path = "ent"
edge_paths = ["kg/train", "kg/valid", "kg/test"]
%s
checkpoint_path = "ckpt"
dimension = 8
num_epochs = 2
batch_size = 100
eval_fraction = 0
eval_num_uniform_negs = 10
workers = 2
dynamic_relations = true
global_emb = false

[entities.country]
num_partitions = 2

[[relations]]
name = "all"
lhs = "country"
rhs = "country"
operator = "diagonal"
`, roles)
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	code, _, errOut := run(t, "import", "--quiet", "--config", cfgPath, "--rel-col", "1",
		filepath.Join(dir, "train.txt"), filepath.Join(dir, "valid.txt"), filepath.Join(dir, "test.txt"))
	if code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	return dir, cfgPath
}

// with edge_roles, train walks the train edge set only; eval
// ranks an imported edge set by name, filtered against all of them, as the
// files would be; it says what the checkpoint was trained on and warns
// when the evaluated edges were trained on; an entity that only valid
// names is ranked, not unknown.
func TestEvalEdgeSets(t *testing.T) {
	dir, cfg := edgeSetsFixture(t, `edge_roles = ["train", "valid", "test"]`)
	code, out, errOut := run(t, "train", "--config", cfg, "--quiet")
	if code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	// 2 epochs x 1 edge set x 2x2 buckets; trained on all three it was 24.
	if !strings.Contains(out, "trained 8 buckets, 3184 edges") || strings.Contains(errOut, "WARNING") {
		t.Errorf("train walked other edge sets than train:\n%s%s", out, errOut)
	}
	code, byName, errOut := run(t, "eval", "--config", cfg, "--edge-set", "test")
	if code != 0 || strings.Contains(errOut, "WARNING") {
		t.Fatalf("eval --edge-set test: %d %s", code, errOut)
	}
	if !strings.Contains(byName, "count      402 (ranks over both sides of 201 edges)") || !strings.Contains(byName, "trained on train (edge_paths[0])") {
		t.Errorf("eval --edge-set test:\n%s", byName)
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	code, byFile, errOut := run(t, "eval", "--config", cfg, "--edges", f("test.txt"), "--rel-col", "1", "--filter", f("train.txt"), "--filter", f("valid.txt"))
	if code != 0 || byFile != byName {
		t.Errorf("the stored test edge set and the test file rank differently (%d %s):\n%s\n%s", code, errOut, byName, byFile)
	}
	// valid holds atlantis, which no training edge names: ranked.
	code, out, errOut = run(t, "eval", "--config", cfg, "--edge-set", "valid", "--format", "json")
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep["count"] != 400.0 || rep["unknown"] != 0.0 || rep["edge_set"] != "valid" {
		t.Errorf("eval --edge-set valid: %d %s %s", code, out, errOut)
	}
	if tr, _ := rep["trained_on"].([]any); len(tr) != 1 || tr[0] != "train" {
		t.Errorf("trained_on: %v", rep["trained_on"])
	}
	// Two partitions: the ranks within the true entity's partition, as
	// many as the ranks, and at least as good.
	if wp, _ := rep["within_partition"].(map[string]any); wp == nil || wp["count"] != 400.0 || wp["mrr"].(float64) < rep["mrr"].(float64) {
		t.Errorf("within_partition: %v (mrr %v)", rep["within_partition"], rep["mrr"])
	}
	if !strings.Contains(byName, "within the true entity's partition: mrr ") {
		t.Errorf("eval's text has no within-partition line:\n%s", byName)
	}
	// A name in no imported file is unknown, and named.
	os.WriteFile(f("new.txt"), []byte("atlantis\tembassy\tuk\nmu\tembassy\tusa\n"), 0o644)
	code, out, errOut = run(t, "eval", "--config", cfg, "--edges", f("new.txt"), "--rel-col", "1")
	if code != 0 || !strings.Contains(out, "unknown    1") || !strings.Contains(errOut, "1 of 2 edges of "+f("new.txt")) || !strings.Contains(errOut, "names: mu;") {
		t.Errorf("unknown names: %d %s %s", code, out, errOut)
	}
	// Evaluating what was trained on is warned about, by name and by file.
	if code, _, errOut := run(t, "eval", "--config", cfg, "--edge-set", "train"); code != 0 ||
		!strings.Contains(errOut, "eval: WARNING: this checkpoint was trained on edge set train (edge_paths[0])") {
		t.Errorf("eval --edge-set train: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "eval", "--config", cfg, "--edges", f("train.txt"), "--rel-col", "1"); code != 0 ||
		!strings.Contains(errOut, "eval: WARNING: "+f("train.txt")+" was imported as edge set train (edge_paths[0]), which this checkpoint was trained on") {
		t.Errorf("eval --edges train.txt: %d %s", code, errOut)
	}
}

// Without edge_roles every edge set is trained on (PBG's behaviour, so
// older configs keep their meaning), and train warns loudly about edge
// sets whose names say they hold evaluation edges.
func TestTrainWarnsAboutEvaluationSets(t *testing.T) {
	_, cfg := edgeSetsFixture(t, "")
	code, out, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=1")
	if code != 0 || !strings.Contains(out, "trained 12 buckets") {
		t.Fatalf("train: %d %s %s", code, out, errOut)
	}
	for _, w := range []string{`training on edge set valid (edge_paths[1], role train), whose name says it holds evaluation edges; give it the role "valid"`,
		`training on edge set test (edge_paths[2], role train), whose name says it holds evaluation edges; give it the role "test"`} {
		if !strings.Contains(errOut, "train: WARNING: "+w) {
			t.Errorf("no warning %q in:\n%s", w, errOut)
		}
	}
}

// The text output says "both sides" only when both are ranked; eval and
// export on an unfinished checkpoint say how far it got.
func TestEvalSidesAndUnfinished(t *testing.T) {
	_, cfg := edgeSetsFixture(t, `edge_roles = ["train", "valid", "test"]`)
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "disable_lhs_negs=true"); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	code, out, errOut := run(t, "eval", "--config", cfg, "--edge-set", "test", "--set", "disable_lhs_negs=true")
	if code != 0 || !strings.Contains(out, "count      201 (ranks over the rhs side only of 201 edges)") || strings.Contains(out, "note") {
		t.Errorf("eval with disable_lhs_negs: %d %s %s", code, out, errOut)
	}
	// The same checkpoint is 8 of 12 buckets of a 3-epoch run.
	code, out, errOut = run(t, "eval", "--config", cfg, "--edge-set", "test", "--set", "disable_lhs_negs=true", "--set", "num_epochs=3")
	const note = "is unfinished: 8 of 12 buckets trained, 2 of 3 epochs complete (run batchprep train to finish it)"
	if code != 0 || !strings.Contains(out, note) {
		t.Errorf("eval of an unfinished checkpoint: %d %s %s", code, out, errOut)
	}
	code, _, errOut = run(t, "export", "--config", cfg, "--set", "disable_lhs_negs=true", "--set", "num_epochs=3")
	if code != 0 || !strings.Contains(errOut, "export: the checkpoint in ") || !strings.Contains(errOut, note) {
		t.Errorf("export of an unfinished checkpoint: %d %s", code, errOut)
	}
}

// A three-column file imported under dynamic_relations without --rel-col
// is warned about, naming the flag.
func TestImportWarnsWithoutRelationColumn(t *testing.T) {
	dir, cfg := edgeSetsFixture(t, "")
	f := func(n string) string { return filepath.Join(dir, n) }
	code, _, errOut := run(t, "import", "--quiet", "--config", cfg, f("train.txt"), f("valid.txt"), f("test.txt"))
	want := "import: warning: " + f("train.txt") + " has 3 columns and no --rel-col was given: under dynamic_relations every edge gets one relation and column 1 is ignored; pass --rel-col 1 if it holds the relation"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("import without --rel-col: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "import", "--quiet", "--config", cfg, "--rel-col", "1", f("train.txt"), f("valid.txt"), f("test.txt")); code != 0 || errOut != "" {
		t.Errorf("import with --rel-col: %d %s", code, errOut)
	}
}
