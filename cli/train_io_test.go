package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/bucket"
)

// train reports each epoch's partition traffic (bytes read and
// written, loads and saves) and the time it waited on partition I/O, and
// plan --simulate predicts the traffic line for line: with P = 4 and every
// bucket order, with P = 4 and a commit after every bucket or every 3, and
// with P = 8 (a commit every 8 buckets, the default, or every 5), with
// buffers of 3 and 4 partitions and the one a memory limit chooses (8),
// the run's lines equal the prediction's exactly.
func TestTrainDiskMatchesPlanSimulate(t *testing.T) {
	dir, cfgPath := trainFixture(t)
	base, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	disk := regexp.MustCompile(`(?m)^epoch \d+ disk: .*$`)
	written, header := map[string]string{}, map[string]string{}
	for _, c := range []struct {
		parts       int
		order, keys string
	}{
		{4, "inside_out", ""}, {4, "outside_in", ""}, {4, "affinity", ""}, {4, "random", ""},
		{4, "inside_out", "checkpoint_buckets = 1"}, {4, "inside_out", "checkpoint_buckets = 3"},
		{8, "inside_out", ""}, {8, "affinity", "checkpoint_buckets = 5"},
		{8, "buffer", "partition_buffer = 4"}, {8, "inside_out", "partition_buffer = 3"},
		{8, "buffer", "memory_limit = \"3GiB\""},
	} {
		text := strings.NewReplacer("num_partitions = 2", fmt.Sprintf("num_partitions = %d", c.parts), "num_epochs = 3", "num_epochs = 2").Replace(string(base))
		if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("p%d-%s-%s", c.parts, c.order, strings.NewReplacer(" ", "", `"`, "").Replace(c.keys))
		if _, ok := written[fmt.Sprint(c.parts)]; !ok {
			if code, _, e := run(t, "import", "--quiet", "--config", cfgPath, "--rel-col", "1", filepath.Join(dir, "train.txt")); code != 0 {
				t.Fatalf("import: %s", e)
			}
			written[fmt.Sprint(c.parts)] = ""
		}
		cfg := filepath.Join(dir, name+".toml")
		text = strings.Replace(text, filepath.Join(dir, "ckpt"), filepath.Join(dir, "ckpt-"+name), 1) + "\n"
		text = strings.Replace(text, "workers = 2", "workers = 2\nbucket_order = \""+c.order+"\"\n"+c.keys, 1)
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, predicted, e := run(t, "plan", "--config", cfg, "--simulate")
		if code != 0 {
			t.Fatalf("%s: plan --simulate: %s", name, e)
		}
		code, trained, e := run(t, "train", "--config", cfg, "--quiet")
		if code != 0 {
			t.Fatalf("%s: train: %s", name, e)
		}
		want, got := disk.FindAllString(predicted, -1), disk.FindAllString(trained, -1)
		if len(want) != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: train's disk lines differ from plan --simulate's:\ntrain:\n%s\nplan --simulate:\n%s", name, trained, predicted)
		}
		// (a buffer of all 8 partitions, chosen by the memory limit, never reads)
		if !strings.Contains(want[1], "partition load") || strings.Contains(want[1], "read 0 B") != strings.Contains(c.keys, "memory_limit") {
			t.Errorf("%s: the second epoch reads nothing: %s", name, want[1])
		}
		if !regexp.MustCompile(`waited on partition I/O: [0-9.]+s of [0-9.]+s \([0-9.]+%\): loads [0-9.]+s, checkpoint writes [0-9.]+s`).MatchString(trained) {
			t.Errorf("%s: no I/O wait in train's summary:\n%s", name, trained)
		}
		if !strings.Contains(predicted, "total disk: read ") {
			t.Errorf("%s: no total in plan --simulate:\n%s", name, predicted)
		}
		// The buffer's loads of the first pass beside their lower bound;
		// a memory limit and no partition_buffer: the largest that fits.
		buf := 2
		fmt.Sscanf(c.keys, "partition_buffer = %d", &buf)
		if strings.Contains(c.keys, "memory_limit") {
			buf = 8
			if !strings.Contains(predicted, "partition_buffer = 8: the largest buffer that fits the budget") {
				t.Errorf("%s: plan --simulate does not print the buffer chosen:\n%s", name, predicted)
			}
		}
		line := fmt.Sprintf(`partition buffer of %d: \d+ partition loads? in the first pass's order \(lower bound %d for any order of the %dx%d buckets\)`,
			buf, bucket.LowerBound(c.parts, c.parts, buf), c.parts, c.parts)
		if !regexp.MustCompile(line).MatchString(predicted) {
			t.Errorf("%s: plan --simulate lacks %q:\n%s", name, line, predicted)
		}
		written[name] = strings.Join(want, "\n")
		header[name], _, _ = strings.Cut(predicted, "\n")
	}
	// A commit every 4 buckets (P = 4's default) writes less than one
	// after every bucket, and the prediction says which it assumes.
	for name, every := range map[string]string{"p4-inside_out-": "every 4 buckets", "p4-inside_out-checkpoint_buckets=1": "every 1 bucket:"} {
		if !strings.Contains(header[name], "a checkpoint commit "+every) {
			t.Errorf("%s: plan --simulate does not say it assumes a commit %s: %s", name, every, header[name])
		}
	}
	if a, b := written["p4-inside_out-"], written["p4-inside_out-checkpoint_buckets=1"]; a == b {
		t.Errorf("the same disk lines with a commit every 4 buckets and after every bucket:\n%s", a)
	}
	if code, _, e := run(t, "plan", "--config", cfgPath, "--simulate", "--max-batches", "3"); code != 2 || !strings.Contains(e, "do not apply with --simulate") {
		t.Errorf("plan --simulate --max-batches: exit %d, %s", code, e)
	}
}
