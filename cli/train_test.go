package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/export"
)

// trainFixture writes Nations and a small training config into a
// temporary directory and imports it.
func trainFixture(t *testing.T) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := nationsFS.ReadFile("kgdata/nations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	cfgPath = filepath.Join(dir, "c.toml")
	cfg := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 8
num_epochs = 3
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
`, filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
	cfg = strings.Replace(cfg, "workers = 2", "workers = 2\ndynamic_relations = true\nglobal_emb = false", 1)
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	if code, _, errOut := run(t, "import", "--quiet", "--config", cfgPath, "--rel-col", "1", filepath.Join(dir, "train.txt")); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	return dir, cfgPath
}

// train writes its log, plot and checkpoint; eval reports the metrics and
// unknown entities; export writes TSV and binary; a second train with
// another config is refused naming the keys; a bad --set names its key.
func TestTrainEvalExport(t *testing.T) {
	dir, cfg := trainFixture(t)
	code, out, errOut := run(t, "train", "--config", cfg)
	if code != 0 {
		t.Fatalf("train: %d %s", code, errOut)
	}
	if !strings.Contains(out, "trained 12 buckets") || !strings.Contains(out, "epoch 3: loss") || !strings.Contains(out, "holdout MRR") {
		t.Errorf("train output:\n%s", out)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "ckpt", "training_log.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 12 {
		t.Errorf("training log has %d lines, want 12", len(lines))
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev["holdout_after"] == nil || ev["io"] == nil {
		t.Errorf("log line %q: %v", lines[0], err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "ckpt", "training.svg")); err != nil || !strings.HasPrefix(string(svg), "<svg") {
		t.Errorf("training.svg: %v", err)
	}
	// Running again: nothing left to train.
	if code, out, _ := run(t, "train", "--config", cfg); code != 0 || !strings.Contains(out, "trained 12 buckets") {
		t.Errorf("second run: %d %s", code, out)
	}

	test := filepath.Join(dir, "test.txt")
	os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("atlantis\tembassy\tusa\nusa\tembassy\tuk\n"), 0o644)
	code, out, errOut = run(t, "eval", "--config", cfg, "--edges", filepath.Join(dir, "extra.txt"), "--rel-col", "1", "--filter", test, "--format", "json")
	if code != 0 {
		t.Fatalf("eval: %s", errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"count", "mrr", "hits@1", "hits@3", "hits@10", "mean_rank"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("eval json lacks %q: %s", k, out)
		}
	}
	if rep["unknown"] != 1.0 || rep["count"] != 2.0 || !strings.Contains(errOut, "atlantis") {
		t.Errorf("unknown entity not reported: %s / %s", out, errOut)
	}
	if code, out, _ := run(t, "eval", "--config", cfg, "--edges", test, "--rel-col", "1"); code != 0 || !strings.Contains(out, "mrr") {
		t.Errorf("eval text: %d %s", code, out)
	}

	if code, out, _ := run(t, "export", "--config", cfg); code != 0 || strings.Count(out, "\ncountry\t") != 13 || !strings.HasPrefix(out, "country\t") {
		t.Errorf("export tsv: %d %q", code, out)
	}
	bin := filepath.Join(dir, "emb.bin")
	if code, _, errOut := run(t, "export", "--config", cfg, "--format", "binary", "--out", bin); code != 0 {
		t.Fatalf("export binary: %s", errOut)
	}
	data, _ := os.ReadFile(bin)
	exp, err := export.Decode(data)
	if err != nil || len(exp.Types) != 1 || len(exp.Types[0].Names) != 14 || len(exp.Types[0].Emb) != 14*8 {
		t.Errorf("binary export: %v %v", exp, err)
	}

	if code, _, errOut := run(t, "train", "--config", cfg, "--set", "lr=0.5", "--set", "dimension=16"); code != 1 ||
		!strings.Contains(errOut, "lr: checkpoint has 0.01, config has 0.5") || !strings.Contains(errOut, "dimension: checkpoint has 8, config has 16") {
		t.Errorf("different config: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "train", "--config", cfg, "--set", "comparator=euclid"); code != 1 || !strings.Contains(errOut, "comparator") {
		t.Errorf("bad --set: %d %s", code, errOut)
	}
}

// Ctrl-C (a canceled context) stops train cleanly with a complete
// checkpoint, and the same command then finishes the run. (The cancel
// comes with the 5th bucket's line, which is printed with the 6th's once
// the checkpoint holding both (a commit every 2 buckets, P = 2's default),
// written behind, is committed: the 7th bucket has trained by then, and a
// checkpoint of it is committed before train stops.)
func TestTrainInterrupted(t *testing.T) {
	_, cfg := trainFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	errOut := &cancelAfterBuckets{n: 5, cancel: cancel}
	env := &Env{Ctx: ctx, Stdin: strings.NewReader(""), Stdout: &out, Stderr: errOut}
	err := runTrain(env, []string{"--config", cfg})
	if !errors.Is(err, context.Canceled) || !strings.Contains(errOut.String(), "stopped after 7 of 12 buckets") {
		t.Fatalf("interrupted train: %v\n%s", err, errOut.String())
	}
	if code, out, errOut := run(t, "train", "--config", cfg); code != 0 || !strings.Contains(out, "trained 12 buckets") ||
		!strings.Contains(errOut, "resuming") {
		t.Fatalf("resumed train: %d %s %s", code, out, errOut)
	} else if !strings.Contains(out, "epoch 2 disk: ") || !strings.Contains(out, "(this run's part of the epoch: it resumed inside it)") ||
		strings.Contains(out, "epoch 1 disk: ") {
		t.Errorf("resumed train's disk lines: the resumed epoch is not marked as partial:\n%s", out)
	}
}

// cancelAfterBuckets is a stderr that cancels after n per-bucket lines of train.
type cancelAfterBuckets struct {
	bytes.Buffer
	n      int
	cancel func()
}

func (c *cancelAfterBuckets) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("train: epoch")) {
		if c.n--; c.n == 0 {
			c.cancel()
		}
	}
	return c.Buffer.Write(p)
}
