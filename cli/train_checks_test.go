package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weightedNations writes Nations' training edges with a weight column (the
// fourth), negative on every neg-th line (none when neg is 0), imports
// them with --weight-col 3 and returns the config path and the number of
// negative weights written.
func weightedNations(t *testing.T, neg int) (cfg string, negatives int) {
	t.Helper()
	dir := t.TempDir()
	data, err := nationsFS.ReadFile("kgdata/nations/train.txt")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		w := "1.5"
		if neg > 0 && i%neg == 0 {
			w = "-0.5"
			negatives++
		}
		fmt.Fprintf(&sb, "%s\t%s\n", line, w)
	}
	train, cfg := filepath.Join(dir, "train.txt"), filepath.Join(dir, "nations.toml")
	os.WriteFile(train, []byte(sb.String()), 0o644)
	os.WriteFile(cfg, []byte(nationsTOML), 0o644)
	if code, _, e := run(t, "import", "--quiet", "--config", cfg, "--rel-col", "1", "--weight-col", "3", train); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, e)
	}
	return cfg, negatives
}

// train warns on stderr, once, how many edges have a negative weight (and
// trains); with none negative it says nothing.
func TestTrainWarnsOnNegativeWeights(t *testing.T) {
	cfg, n := weightedNations(t, 7)
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=2")
	if code != 0 {
		t.Fatalf("train: exit %d\n%s", code, errOut)
	}
	want := fmt.Sprintf("train: warning: %d of the 1592 weighted edges in epoch 0 have a negative weight", n)
	if !strings.Contains(errOut, want) || strings.Count(errOut, "negative weight") != 1 {
		t.Errorf("train with %d negative weights: stderr does not say once %q:\n%s", n, want, errOut)
	}
	cfg, _ = weightedNations(t, 0)
	code, _, errOut = run(t, "train", "--config", cfg, "--quiet")
	if code != 0 || strings.Contains(errOut, "negative weight") {
		t.Errorf("train with positive weights: exit %d\n%s", code, errOut)
	}
}

// train refuses a config with no negatives (naming both keys), and a
// featurized entity type with import's words, not as a store mismatch.
func TestTrainRefusesNoNegativesAndFeaturized(t *testing.T) {
	cfg, _ := weightedNations(t, 0)
	code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_batch_negs=0", "--set", "num_uniform_negs=0")
	if code != 1 || !strings.Contains(errOut, "num_batch_negs: 0, and num_uniform_negs 0") || !strings.Contains(errOut, "no negative") {
		t.Errorf("train with no negatives: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "ckpt")); err == nil {
		t.Errorf("train with no negatives wrote a checkpoint directory")
	}
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet", "--set", "num_batch_negs=0", "--set", "num_uniform_negs=0", "--set", "relations.0.all_negs=true"); code != 0 {
		t.Errorf("train with all_negs and no sampled negatives: exit %d\n%s", code, errOut)
	}
	code, _, errOut = run(t, "train", "--config", cfg, "--quiet", "--set", "entities.country.featurized=true")
	if code != 1 || !strings.Contains(errOut, "entities.country: featurized entity types are not supported") || strings.Contains(errOut, "different config") {
		t.Errorf("train on a featurized type: exit %d\n%s", code, errOut)
	}
}
