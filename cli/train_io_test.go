package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 24: train reports each epoch's partition traffic (bytes read and
// written, loads and saves) and the time it waited on partition I/O, and
// plan --simulate predicts the traffic line for line: with P = 4 and every
// bucket order, the run's lines equal the prediction's exactly.
func TestTrainDiskMatchesPlanSimulate(t *testing.T) {
	dir, cfgPath := trainFixture(t)
	base, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	four := strings.NewReplacer("num_partitions = 2", "num_partitions = 4", "num_epochs = 3", "num_epochs = 2").Replace(string(base))
	if err := os.WriteFile(cfgPath, []byte(four), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, e := run(t, "import", "--quiet", "--config", cfgPath, "--rel-col", "1", filepath.Join(dir, "train.txt")); code != 0 {
		t.Fatalf("import: %s", e)
	}
	disk := regexp.MustCompile(`(?m)^epoch \d+ disk: .*$`)
	for _, order := range []string{"inside_out", "outside_in", "affinity", "random"} {
		cfg := filepath.Join(dir, order+".toml")
		text := strings.Replace(four, filepath.Join(dir, "ckpt"), filepath.Join(dir, "ckpt-"+order), 1) + "\n"
		text = strings.Replace(text, "workers = 2", "workers = 2\nbucket_order = \""+order+"\"", 1)
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, predicted, e := run(t, "plan", "--config", cfg, "--simulate")
		if code != 0 {
			t.Fatalf("%s: plan --simulate: %s", order, e)
		}
		code, trained, e := run(t, "train", "--config", cfg, "--quiet")
		if code != 0 {
			t.Fatalf("%s: train: %s", order, e)
		}
		want, got := disk.FindAllString(predicted, -1), disk.FindAllString(trained, -1)
		if len(want) != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: train's disk lines differ from plan --simulate's:\ntrain:\n%s\nplan --simulate:\n%s", order, trained, predicted)
		}
		if !strings.Contains(want[1], "partition load") || strings.Contains(want[1], "read 0 B") {
			t.Errorf("%s: the second epoch reads nothing: %s", order, want[1])
		}
		if !regexp.MustCompile(`waited on partition I/O: [0-9.]+s of [0-9.]+s \([0-9.]+%\): loads [0-9.]+s, checkpoint writes [0-9.]+s`).MatchString(trained) {
			t.Errorf("%s: no I/O wait in train's summary:\n%s", order, trained)
		}
		if !strings.Contains(predicted, "total disk: read ") {
			t.Errorf("%s: no total in plan --simulate:\n%s", order, predicted)
		}
	}
	if code, _, e := run(t, "plan", "--config", cfgPath, "--simulate", "--max-batches", "3"); code != 2 || !strings.Contains(e, "do not apply with --simulate") {
		t.Errorf("plan --simulate --max-batches: exit %d, %s", code, e)
	}
}
