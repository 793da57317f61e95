package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// pbgImporterConfig is a PBG config as a PBG user writes it, for the data
// PBG's importer wrote under data/ (graph/pbg/testdata/pbgdata), paths
// relative to the file.
const pbgImporterConfig = `def get_torchbiggraph_config():
    return dict(
        entity_path="data",
        edge_paths=["data/train"],
        checkpoint_path="model",
        entities={"user": {"num_partitions": 2}, "item": {"num_partitions": 1}},
        relations=[
            {"name": "buys", "lhs": "user", "rhs": "item", "operator": "none"},
            {"name": "follows", "lhs": "user", "rhs": "user", "operator": "none"},
        ],
        dimension=4,
        num_epochs=1,
        batch_size=2,
        num_batch_negs=2,
        num_uniform_negs=2,
        eval_fraction=0,
        workers=1,
    )
`

// dirState is every file below dir with its size, modification time and
// content.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = fi.ModTime().String() + "|" + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A PBG config drives batchprep unchanged on the directory PBG's importer
// wrote: the first command converts PBG's files into a store beside
// entity_path (entity_path + ".batchprep") without touching them, later
// ones reuse that store while PBG's files are unchanged, and a change to
// them (a bucket file removed) rebuilds it.
func TestPBGConfigUnchanged(t *testing.T) {
	needPython3(t)
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "data"), os.DirFS(filepath.Join("..", "graph", "pbg", "testdata", "pbgdata"))); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "config.py")
	os.WriteFile(cfg, []byte(pbgImporterConfig), 0o644)
	data, store := filepath.Join(root, "data"), filepath.Join(root, "data.batchprep")
	before := dirState(t, data)
	code, _, errOut := run(t, "train", "--quiet", "--config", cfg)
	if code != 0 {
		t.Fatalf("train on PBG's data: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "PyTorch-BigGraph's data in "+data+" converted into the store "+store+" (14 edges in 1 edge sets; no store converted from them yet)") {
		t.Fatalf("train does not say it converted PBG's data:\n%s", errOut)
	}
	// The run continues on the same store: PBG's files are unchanged.
	code, _, errOut = run(t, "train", "--quiet", "--config", cfg, "--set", "num_epochs=2")
	if code != 0 || !strings.Contains(errOut, "reading the store "+store+", converted from PyTorch-BigGraph's data in "+data+" (unchanged since)") {
		t.Fatalf("second train: exit %d: %s", code, errOut)
	}
	code, out, errOut := run(t, "export", "--config", cfg)
	if code != 0 || !strings.Contains(out, "user\téva\t") || !strings.Contains(out, "item\tbox\t") {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := run(t, "import", "--config", cfg, "--from", "pbg"); code != 0 || !strings.Contains(errOut, "nothing to do") {
		t.Fatalf("import --from pbg of converted data: exit %d: %s", code, errOut)
	}
	if after := dirState(t, data); !reflect.DeepEqual(before, after) {
		t.Fatal("PBG's directory changed")
	}
	// PBG's data change: the store is rebuilt from them.
	os.Remove(filepath.Join(data, "train", "edges_1_1.h5"))
	code, _, errOut = run(t, "plan", "--config", cfg, "--format", "summary")
	if code != 0 || !strings.Contains(errOut, "converted into the store "+store+" (9 edges in 1 edge sets; PBG's files changed since the last conversion ("+
		filepath.Join(data, "train", "edges_1_1.h5")+" is gone))") {
		t.Fatalf("plan after a bucket file was removed: exit %d: %s", code, errOut)
	}
	// A file rewritten with the same size is seen by its modification time.
	names := filepath.Join(data, "entity_names_item_0.json")
	later := time.Now().Add(time.Hour)
	os.Chtimes(names, later, later)
	code, _, errOut = run(t, "import", "--config", cfg, "--from", "pbg", data, filepath.Join(data, "train"))
	if code != 0 || !strings.Contains(errOut, "PBG's files changed since the last conversion ("+names+" was modified)") {
		t.Fatalf("import --from pbg with the config's own directories: exit %d: %s", code, errOut)
	}
}

// A PBG user's whole setup, unchanged: the config, the directory PBG's
// importer wrote and a PBG checkpoint in checkpoint_path whose names are
// PBG's entity files under entity_path. train with init_path set to that
// checkpoint starts every entity from its own row (lr = 0: the export
// gives the checkpoint's values back).
func TestPBGConfigWithCheckpoint(t *testing.T) {
	needPython3(t)
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "data"), os.DirFS(filepath.Join("..", "graph", "pbg", "testdata", "pbgdata"))); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "config.py")
	os.WriteFile(cfg, []byte(pbgImporterConfig), 0o644)
	// A checkpoint in PBG's layout at root/model, as PBG leaves it: made
	// here by batchprep, then its entity files removed and its
	// config.json's paths made relative, as PBG writes them.
	tmp := filepath.Join(root, "tmp")
	if code, _, errOut := run(t, "train", "--quiet", "--config", cfg, "--set", "checkpoint_path="+tmp); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	_, want, _ := run(t, "export", "--config", cfg, "--set", "checkpoint_path="+tmp)
	model := filepath.Join(root, "model")
	if code, _, errOut := run(t, "export", "--config", cfg, "--set", "checkpoint_path="+tmp, "--format", "pbg", "--out", model); code != 0 {
		t.Fatalf("export --format pbg: %s", errOut)
	}
	ents, _ := os.ReadDir(model)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "entity_") {
			os.Remove(filepath.Join(model, e.Name()))
		}
	}
	b, _ := os.ReadFile(filepath.Join(model, "config.json"))
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c["entity_path"], c["checkpoint_path"], c["edge_paths"] = "data", "model", []string{"data/train"}
	b, _ = json.Marshal(c)
	os.WriteFile(filepath.Join(model, "config.json"), b, 0o644)

	sets := []string{"--set", "init_path=" + model, "--set", "checkpoint_path=" + filepath.Join(root, "model-batchprep"), "--set", "lr=0"}
	code, _, errOut := run(t, append([]string{"train", "--quiet", "--config", cfg}, sets...)...)
	if code != 0 || !strings.Contains(errOut, "names from "+filepath.Join(root, "data")+"): 9 of the store's 9 entities matched by name (item 4 of 4, user 5 of 5)") {
		t.Fatalf("train from PBG's checkpoint: exit %d: %s", code, errOut)
	}
	if _, got, _ := run(t, append([]string{"export", "--config", cfg}, sets...)...); exportRowsByName(got) != exportRowsByName(want) || len(want) < 100 {
		t.Fatalf("an lr=0 run from PBG's checkpoint exports other values:\n%s\n%s", got, want)
	}
}

// exportRowsByName is a TSV export's lines, sorted.
func exportRowsByName(tsv string) string {
	lines := strings.Split(strings.TrimSpace(tsv), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A PBG config with a training and a test edge path (PBG's importer wrote
// both) drives train and eval unchanged: edge_roles, which PBG's schema
// does not have, comes from --set; both edge sets are converted, the test
// one is never trained on and eval ranks it by name.
func TestPBGConfigEdgeRoles(t *testing.T) {
	needPython3(t)
	root := t.TempDir()
	src := filepath.Join("..", "graph", "pbg", "testdata", "pbgdata")
	if err := os.CopyFS(filepath.Join(root, "data"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "data", "test"), os.DirFS(filepath.Join(src, "train"))); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "config.py")
	os.WriteFile(cfg, []byte(strings.Replace(pbgImporterConfig, `["data/train"]`, `["data/train", "data/test"]`, 1)), 0o644)
	roles := []string{"--set", `edge_roles=["train","test"]`}
	code, out, errOut := run(t, append([]string{"train", "--config", cfg}, roles...)...)
	if code != 0 || !strings.Contains(errOut, "(28 edges in 2 edge sets;") || !strings.Contains(out, "trained 4 buckets, 14 edges") {
		t.Fatalf("train: exit %d: %s\n%s", code, out, errOut)
	}
	code, out, errOut = run(t, append([]string{"eval", "--config", cfg, "--edge-set", "test"}, roles...)...)
	if code != 0 || !strings.Contains(strings.ToLower(out), "mrr") || !strings.Contains(errOut, "(unchanged since)") {
		t.Fatalf("eval --edge-set test: exit %d: %s\n%s", code, out, errOut)
	}
}
