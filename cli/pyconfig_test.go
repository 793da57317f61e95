package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// pbgNations is the nations config written as PyTorch-BigGraph writes its
// configs, with paths relative to the file; nationsTOML is the same dict.
const pbgNations = `# PBG-style config for the nations graph.
import os

DATA = "."


def get_torchbiggraph_config():
    config = dict(
        entity_path=os.path.join(DATA, "ent"),
        edge_paths=[os.path.join(DATA, "edges")],
        checkpoint_path="ckpt",
        entities={"country": {"num_partitions": 2}},
        relations=[
            {"name": "all", "lhs": "country", "rhs": "country", "operator": "diagonal"},
        ],
        dynamic_relations=True,
        global_emb=False,
        dimension=8,
        num_epochs=1,
        batch_size=100,
        eval_fraction=0.1,
        eval_num_uniform_negs=10,
        workers=2,
    )
    return config
`

const nationsTOML = `entity_path = "ent"
edge_paths = ["edges"]
checkpoint_path = "ckpt"
dynamic_relations = true
global_emb = false
dimension = 8
num_epochs = 1
batch_size = 100
eval_fraction = 0.1
eval_num_uniform_negs = 10
workers = 2
[entities.country]
num_partitions = 2
[[relations]]
name = "all"
lhs = "country"
rhs = "country"
operator = "diagonal"
`

// needPython3 skips a test when the default interpreter is absent.
func needPython3(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(config.DefaultPython); err != nil {
		t.Skipf("%s is not installed (apt-get install python3): Python configs not checked", config.DefaultPython)
	}
}

// Every command that takes --config accepts a PBG Python config, reads it
// as the TOML of the same dict, and applies --set after it.
func TestPythonConfigCommands(t *testing.T) {
	needPython3(t)
	dir := t.TempDir()
	for _, name := range []string{"train.txt", "test.txt"} {
		data, err := nationsFS.ReadFile("kgdata/nations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	py, toml := filepath.Join(dir, "nations.py"), filepath.Join(dir, "nations.toml")
	os.WriteFile(py, []byte(pbgNations), 0o644)
	os.WriteFile(toml, []byte(nationsTOML), 0o644)
	ok := func(args ...string) string {
		t.Helper()
		code, out, e := run(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, e)
		}
		return out
	}
	ok("import", "--quiet", "--config", py, "--rel-col", "1", filepath.Join(dir, "train.txt"))
	fromPy := ok("plan", "--config", py, "--format", "jsonl")
	if fromTOML := ok("plan", "--config", toml, "--format", "jsonl"); fromPy != fromTOML || fromPy == "" {
		t.Errorf("plan of the .py and of the .toml differ:\n%.300s\n%.300s", fromPy, fromTOML)
	}
	ok("train", "--quiet", "--config", py)
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "checkpoint.json")); err != nil {
		t.Errorf("train wrote no checkpoint next to the .py: %v", err)
	}
	// --set applies after the file is read: the checkpoint's config and
	// the overridden one differ in dimension.
	if code, _, e := run(t, "train", "--quiet", "--config", py, "--set", "dimension=16"); code != 1 || !strings.Contains(e, "dimension: checkpoint has 8, config has 16") {
		t.Errorf("train --set dimension=16: exit %d\n%s", code, e)
	}
	if code, _, e := run(t, "train", "--quiet", "--config", py, "--set", "no_such_key=1"); code != 2 || !strings.Contains(e, "no_such_key") {
		t.Errorf("train --set no_such_key=1: exit %d\n%s", code, e)
	}
	// What batchprep does not support is refused as in a TOML or JSON config.
	bias := filepath.Join(dir, "bias.py")
	os.WriteFile(bias, []byte(strings.Replace(pbgNations, "global_emb=False,", "global_emb=False, bias=True,", 1)), 0o644)
	if code, _, e := run(t, "train", "--quiet", "--config", bias); code != 1 || !strings.Contains(e, "bias = true is not supported") {
		t.Errorf("train with bias=True: exit %d\n%s", code, e)
	}
	if out := ok("eval", "--config", py, "--edges", filepath.Join(dir, "test.txt"), "--rel-col", "1"); !strings.Contains(out, "mrr") && !strings.Contains(out, "MRR") {
		t.Errorf("eval output:\n%s", out)
	}
	ok("export", "--config", py, "--out", filepath.Join(dir, "emb.tsv"))
	if out := ok("verify", "--config", py); !strings.Contains(out, "store sound") {
		t.Errorf("verify output:\n%s", out)
	}
}

// A Python config's failures reach the user as the file's own traceback
// or a message naming the file; BATCHPREP_PYTHON and
// BATCHPREP_PYTHON_TIMEOUT are read (t.Setenv: not parallel).
func TestPythonConfigFailures(t *testing.T) {
	needPython3(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.py", "def get_torchbiggraph_config():\n    return dict(\n        dimension=8\n        lr=0.1,\n    )\n")
	slow := write("slow.py", "import time\n\ndef get_torchbiggraph_config():\n    time.sleep(60)\n    return {}\n")
	good := write("good.py", pbgNations)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"syntax error", nil, []string{"plan", "--config", broken},
			[]string{"batchprep plan: " + broken + ": evaluating it with Python failed:", `File "` + broken + `", line 3`, "SyntaxError"}},
		{"timeout", map[string]string{"BATCHPREP_PYTHON_TIMEOUT": "0.3"}, []string{"train", "--config", slow},
			[]string{"batchprep train: " + slow + ": Python did not finish evaluating it within 300ms"}},
		{"bad timeout", map[string]string{"BATCHPREP_PYTHON_TIMEOUT": "soon"}, []string{"import", "--config", good, filepath.Join(dir, "x.txt")},
			[]string{`batchprep import: BATCHPREP_PYTHON_TIMEOUT="soon": want a positive duration`}},
		{"no python", map[string]string{"BATCHPREP_PYTHON": filepath.Join(dir, "no-python")}, []string{"eval", "--config", good, "--edge-set", "edges"},
			[]string{"batchprep eval: " + good + ": a Python config needs a Python interpreter, and " + filepath.Join(dir, "no-python") + " is not there"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			code, _, e := run(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, e)
			}
			for _, w := range c.want {
				if !strings.Contains(e, w) {
					t.Errorf("stderr:\n%s\nwant %q in it", e, w)
				}
			}
		})
	}
}
