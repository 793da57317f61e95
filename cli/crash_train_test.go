package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
)

// trainKeys is the training config of the crash and signal tests: one
// worker, so that training is a deterministic function of the config and
// the data (graph/train invariant 2) and a killed-and-resumed run can be
// compared bit for bit with an uninterrupted one; a checkpoint after each
// of 4x4 buckets, 2 epochs.
const trainKeys = `entity_path = "ent"
edge_paths = ["edges"]
checkpoint_path = "ckpt"
workers = 1
dimension = 16
num_epochs = 2
batch_size = 100
seed = 7
[entities.n]
num_partitions = 4
[[relations]]
name = "r0"
lhs = "n"
rhs = "n"
operator = "diagonal"
[[relations]]
name = "r1"
lhs = "n"
rhs = "n"
[[relations]]
name = "r2"
lhs = "n"
rhs = "n"
operator = "translation"
`

// newTrainFixture imports edges edges of the big fixture and writes the
// training config t.toml beside them.
func newTrainFixture(t *testing.T, edges int) (dir, cfg string) {
	t.Helper()
	f := newBigFixture(t, 10, edges)
	cfg = filepath.Join(f.dir, "t.toml")
	if err := os.WriteFile(cfg, []byte(trainKeys), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, e := runChild(t, f.dir, "import", "--config", cfg, "--rel-col", "1", "--quiet", f.edges); code != 0 {
		t.Fatal(e)
	}
	return f.dir, cfg
}

// digests gives the SHA-256 of each file of a checkpoint's manifest, by
// what it holds ("model", "TYPE/PARTITION"): the names carry the
// checkpoint's number, which depends on how often the run committed.
func digests(m *train.Manifest) map[string]string {
	d := map[string]string{"model": m.Model.SHA256}
	for _, r := range m.Tables {
		d[fmt.Sprintf("%s/%d", r.Type, r.Partition)] = r.SHA256
	}
	return d
}

func sameDigests(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// interruptFixture is the training run that crash and signal tests
// interrupt (smaller under the race detector), with the uninterrupted
// run's state after every bucket, by buckets trained, and the number of
// buckets.
func interruptFixture(t *testing.T) (dir, cfg string, ref map[int64]map[string]string, last int64) {
	t.Helper()
	edges := 30000
	if raceEnabled {
		edges = 6000
	}
	dir, cfg = newTrainFixture(t, edges)
	ref, _ = referenceCheckpoints(t, cfg, filepath.Join(dir, "ref"))
	for s := range ref {
		last = max(last, s)
	}
	return dir, cfg, ref, last
}

// referenceCheckpoints trains cfgPath uninterrupted in this process, in
// checkpoint directory ref, committing after every bucket
// (checkpoint_buckets = 1, which changes no trained value), and returns
// the digests of the state after each bucket, by buckets trained, and the
// run's duration.
func referenceCheckpoints(t *testing.T, cfgPath, ref string) (map[int64]map[string]string, time.Duration) {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CheckpointPath = ref
	cfg.CheckpointBuckets = 1
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seqs := map[int64]map[string]string{}
	var tr *train.Trainer
	tr, err = train.New(cfg, st, train.Options{Bucket: func(train.Event) {
		seqs[tr.Manifest().Buckets] = digests(tr.Manifest())
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return seqs, time.Since(start)
}

// checkCheckpoint checks what a kill left in ckpt: no checkpoint yet, or a
// sound one (every file matches the manifest) equal, file for file, to the
// uninterrupted run's state after the same bucket; a plot that is whole;
// a training log that train accepts. It returns the buckets the checkpoint
// holds (0: none).
func checkCheckpoint(t *testing.T, ckpt string, ref map[int64]map[string]string) int64 {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ckpt, train.ManifestName)); os.IsNotExist(err) {
		return 0
	}
	c := train.VerifyCheckpoint(ckpt)
	if len(c.Problems) > 0 {
		t.Errorf("the checkpoint a kill left is not sound: %v", c.Problems)
		return -1
	}
	seq := c.Manifest.Buckets
	if !sameDigests(digests(c.Manifest), ref[seq]) {
		t.Errorf("checkpoint %d (after %d buckets) differs from the uninterrupted run's state after bucket %d", c.Manifest.Seq, seq, seq)
	}
	if svg, err := os.ReadFile(filepath.Join(ckpt, "training.svg")); err == nil && !strings.HasSuffix(strings.TrimSpace(string(svg)), "</svg>") {
		t.Errorf("training.svg is not whole")
	}
	if err := train.CheckLog(filepath.Join(ckpt, train.LogName), c.Manifest); err != nil {
		t.Errorf("training log: %v", err)
	}
	return seq
}

// For train: batchprep train is SIGKILLed at a
// uniformly random moment of its run. The checkpoint left is then either
// none or a complete one equal to the uninterrupted run's checkpoint of the
// same number (so the old or the new version, never a mix); running the
// same command again finishes, and its final checkpoint equals the
// uninterrupted run's file for file, with no temporary left.
func TestCrashTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	dir, cfg, ref, last := interruptFixture(t)
	ckpt := filepath.Join(dir, "ckpt")
	args := []string{"train", "--config", cfg, "--quiet"}
	dur := timed(t, dir, args...)
	rng := crashRand(t)
	killed, runs := 0, crashRuns(t)
	outcomes := map[string]int{}
	defer func() {
		t.Logf("%d runs killed before the end (wanted %d) of %d buckets, uninterrupted run %v; checkpoint after the kill: %v", killed, runs, last, dur, outcomes)
	}()
	for attempt := 0; killed < runs && attempt < 4*runs; attempt++ {
		os.RemoveAll(ckpt)
		d := time.Duration(rng.Int64N(int64(dur) + 1))
		if !killAt(t, dir, d, args...) {
			outcomes["run finished first"]++
			continue
		}
		killed++
		switch seq := checkCheckpoint(t, ckpt, ref); {
		case seq == 0:
			outcomes["none yet"]++
		case seq == last:
			outcomes["complete run"]++
		case seq > 0:
			outcomes["an intermediate checkpoint"]++
		}
		if code, _, e := runChild(t, dir, args...); code != 0 {
			t.Fatalf("kill at %v: running the command again failed: %s", d, e)
		}
		m, err := train.ReadManifest(ckpt)
		if err != nil || m == nil || !m.Done || !sameDigests(digests(m), ref[last]) {
			t.Fatalf("kill at %v: the resumed run's checkpoint differs from the uninterrupted run's (%v)", d, err)
		}
		for _, e := range must(os.ReadDir(ckpt)) {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("kill at %v: %s left after the run finished", d, e.Name())
			}
		}
		if c := train.VerifyCheckpoint(ckpt); len(c.Notes) > 0 {
			t.Errorf("kill at %v: stray files after the run finished: %v", d, c.Notes)
		}
	}
}
