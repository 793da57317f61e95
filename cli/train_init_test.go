package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// init_path naming a PBG checkpoint (written by export --format pbg)
// starts a run from its values: with lr = 0 the new run exports exactly
// the first run's model. A directory that is not a PBG checkpoint is
// refused.
func TestTrainInitPathPBG(t *testing.T) {
	dir, cfg := exportFixture(t, "affine", "cos", false)
	if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	pbgDir := filepath.Join(dir, "pbg")
	if code, _, errOut := run(t, "export", "--config", cfg, "--format", "pbg", "--out", pbgDir); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	_, want, _ := run(t, "export", "--config", cfg)
	set := []string{"--set", "checkpoint_path=" + filepath.Join(dir, "ckpt2"), "--set", "lr=0", "--set", "num_epochs=1"}
	code, _, errOut := run(t, append([]string{"train", "--quiet", "--config", cfg, "--set", "init_path=" + pbgDir}, set...)...)
	if code != 0 {
		t.Fatalf("train from init_path: %s", errOut)
	}
	_, got, _ := run(t, append([]string{"export", "--config", cfg}, set...)...)
	if got != want || len(got) < 1000 {
		t.Fatalf("export after an lr=0 run from init_path differs (%d and %d bytes)", len(got), len(want))
	}
	code, _, errOut = run(t, append([]string{"train", "--quiet", "--config", cfg, "--set", "init_path=" + dir,
		"--set", "checkpoint_path=" + filepath.Join(dir, "ckpt3")}, set[2:]...)...)
	if code == 0 || !strings.Contains(errOut, "init_path must be a PyTorch-BigGraph checkpoint directory") {
		t.Fatalf("init_path without a checkpoint: exit %d: %s", code, errOut)
	}
}

// pbgRunLayout moves the entity files of a checkpoint written by export
// --format pbg to where a PBG run keeps them: the checkpoint in
// root/model/nations, the names in root/data/nations, and config.json
// naming both relative to root, as PBG writes it. It returns the
// checkpoint directory.
func pbgRunLayout(t *testing.T, exported, root string) string {
	t.Helper()
	ckpt, data := filepath.Join(root, "model", "nations"), filepath.Join(root, "data", "nations")
	if err := os.MkdirAll(filepath.Dir(ckpt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(exported, ckpt); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(data, 0o755)
	ents, _ := os.ReadDir(ckpt)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "entity_") {
			if err := os.Rename(filepath.Join(ckpt, e.Name()), filepath.Join(data, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	var c map[string]any
	b, _ := os.ReadFile(filepath.Join(ckpt, "config.json"))
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c["entity_path"], c["checkpoint_path"] = "data/nations", "model/nations"
	b, _ = json.Marshal(c)
	os.WriteFile(filepath.Join(ckpt, "config.json"), b, 0o644)
	return ckpt
}

// exportedRows is an export's entity lines by (type, name).
func exportedRows(t *testing.T, tsv string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(tsv, "\n") {
		if f := strings.SplitN(l, "\t", 3); len(f) == 3 && f[0] == "country" {
			out[f[1]] = f[2]
		}
	}
	if len(out) == 0 {
		t.Fatalf("no entity lines in the export:\n%.300s", tsv)
	}
	return out
}

// init_path places the checkpoint's rows by entity name: a PBG checkpoint
// (names under the entity_path of its config.json, relative to the PBG
// run's directory) starts a store imported from text with another seed or
// another partition count with each entity's own row; train says where it
// started from and how many matched. Entities the checkpoint does not name
// are refused unless --init-allow-unmatched; a checkpoint whose names
// cannot be found is refused, naming where they were looked for.
func TestTrainInitPathByName(t *testing.T) {
	dir, cfg := exportFixture(t, "affine", "cos", false)
	if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	exported := filepath.Join(dir, "pbg")
	if code, _, errOut := run(t, "export", "--config", cfg, "--format", "pbg", "--out", exported); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	_, first, _ := run(t, "export", "--config", cfg)
	want := exportedRows(t, first)
	ckpt := pbgRunLayout(t, exported, filepath.Join(dir, "pbgrun"))
	// store imports train FILE with the sets of its name into its own
	// directories and returns those sets.
	store := func(name, file string, sets ...string) []string {
		sets = append(sets, "--set", "entity_path="+filepath.Join(dir, name, "ent"), "--set", "edge_paths="+`["`+filepath.Join(dir, name, "edges")+`"]`,
			"--set", "checkpoint_path="+filepath.Join(dir, name, "ckpt"), "--set", "lr=0", "--set", "num_epochs=1")
		args := append([]string{"import", "--quiet", "--config", cfg, "--rel-col", "1"}, sets...)
		if code, _, errOut := run(t, append(args, file)...); code != 0 {
			t.Fatalf("import %s: %s", name, errOut)
		}
		return sets
	}
	train := func(sets []string, extra ...string) (int, string) {
		args := append([]string{"train", "--quiet", "--config", cfg, "--set", "init_path=" + ckpt}, sets...)
		code, _, errOut := run(t, append(args, extra...)...)
		return code, errOut
	}
	for _, tc := range []struct {
		name string
		sets []string
	}{
		{"seed", []string{"--set", "seed=1"}},
		{"onepart", []string{"--set", "seed=1", "--set", "entities.country.num_partitions=1"}},
	} {
		sets := store(tc.name, filepath.Join(dir, "train.txt"), tc.sets...)
		code, errOut := train(sets)
		if code != 0 {
			t.Fatalf("%s: train from init_path: %s", tc.name, errOut)
		}
		if !strings.Contains(errOut, "starting from init_path "+ckpt+" (PyTorch-BigGraph checkpoint, version 3; names from "+filepath.Join(dir, "pbgrun", "data", "nations")+
			"): 14 of the store's 14 entities matched by name (country 14 of 14)") {
			t.Fatalf("%s: train does not say where it started from:\n%s", tc.name, errOut)
		}
		_, got, _ := run(t, append([]string{"export", "--config", cfg}, sets...)...)
		if g := exportedRows(t, got); !reflect.DeepEqual(g, want) {
			t.Fatalf("%s: an lr=0 run from init_path does not give each entity its own row", tc.name)
		}
	}
	// A store with an entity the checkpoint does not name.
	train0, _ := os.ReadFile(filepath.Join(dir, "train.txt"))
	rel := strings.Split(strings.SplitN(string(train0), "\n", 2)[0], "\t")[1]
	os.WriteFile(filepath.Join(dir, "extra.txt"), append(train0, []byte("atlantis\t"+rel+"\tusa\n")...), 0o644)
	sets := store("extra", filepath.Join(dir, "extra.txt"))
	code, errOut := train(sets)
	if code == 0 || !strings.Contains(errOut, `1 of the store's 15 entities have no row in the checkpoint (country: 1 of 15, e.g. "atlantis"`) ||
		!strings.Contains(errOut, "--init-allow-unmatched") {
		t.Fatalf("an unmatched entity: exit %d: %s", code, errOut)
	}
	code, errOut = train(sets, "--init-allow-unmatched")
	if code != 0 || !strings.Contains(errOut, "14 of the store's 15 entities matched by name (country 14 of 15); the other 1 start at random") {
		t.Fatalf("--init-allow-unmatched: exit %d: %s", code, errOut)
	}
	_, got, _ := run(t, append([]string{"export", "--config", cfg}, sets...)...)
	g := exportedRows(t, got)
	if g["atlantis"] == "" {
		t.Fatal("the unmatched entity has no row")
	}
	delete(g, "atlantis")
	if !reflect.DeepEqual(g, want) {
		t.Fatal("--init-allow-unmatched: the matched entities do not start from their rows")
	}
	// The names are gone: refused, naming where they were looked for.
	os.RemoveAll(filepath.Join(dir, "pbgrun", "data"))
	sets = store("nonames", filepath.Join(dir, "train.txt"))
	code, errOut = train(sets)
	if code == 0 || !strings.Contains(errOut, "the names of its entities are not found (looked for entity_names_country_0.json in "+filepath.Join(dir, "pbgrun", "data", "nations")) {
		t.Fatalf("no names: exit %d: %s", code, errOut)
	}
}
