package train_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// Invariant 9: eval's estimate counts every partition twice at the
// config's dimension (loaded, then concatenated per type), plus scratch
// that grows with the negatives. It reads only counts.
func TestMemoryEstimate(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(200), "dimension = 100\nworkers = 1\nbatch_size = 1000\nnum_batch_negs = 50\nnum_uniform_negs = 50\n", 4)
	st := openStore(t, cfg)
	var all uint64
	for p := range 4 {
		n, err := st.EntityCount("node", p)
		if err != nil {
			t.Fatal(err)
		}
		all += uint64(n)
	}
	e, err := train.EvalMemory(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if e.Rows != all || e.Tables != 2*all*101*4 || e.Bytes != e.Tables+e.Work || e.Work == 0 {
		t.Errorf("eval estimate %+v, %d entities", e, all)
	}
	// More negatives need more scratch.
	more := *cfg
	more.NumUniformNegs = 50000
	e2, _ := train.EvalMemory(&more, st)
	if e2.Work <= e.Work {
		t.Errorf("scratch with 1000x the uniform negatives: %d, before %d", e2.Work, e.Work)
	}
	if s := e.String(); !strings.Contains(s, "entity rows of dimension 100") {
		t.Errorf("String: %s", s)
	}
}

// memory_limit says what a run may use, not what it trains: changing it
// keeps the checkpoint's fingerprint.
func TestMemoryLimitNotFingerprinted(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), "dimension = 4\n", 1)
	limited := *cfg
	limited.MemoryLimit = "2GiB"
	if d := train.DiffFingerprints(train.Fingerprint(cfg, "s"), train.Fingerprint(&limited, "s")); len(d) > 0 {
		t.Errorf("memory_limit changes the fingerprint: %v", d)
	}
}

// partition_buffer is in the fingerprint only when it decides what is
// trained: with the buffer order or buffer negatives.
func TestPartitionBufferFingerprinted(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), "dimension = 4\n", 1)
	four := *cfg
	four.PartitionBuffer = 4
	if d := train.DiffFingerprints(train.Fingerprint(cfg, "s"), train.Fingerprint(&four, "s")); len(d) > 0 {
		t.Errorf("partition_buffer changes an inside_out run's fingerprint: %v", d)
	}
	for _, edit := range []func(c *config.Config){
		func(c *config.Config) { c.BucketOrder = "buffer" },
		func(c *config.Config) { c.Negatives = "buffer" },
	} {
		a, b := *cfg, four
		edit(&a)
		edit(&b)
		if d := train.DiffFingerprints(train.Fingerprint(&a, "s"), train.Fingerprint(&b, "s")); len(d) != 1 || !strings.Contains(d[0], "partition_buffer: checkpoint has 2, config has 4") {
			t.Errorf("buffer order or negatives: %v", d)
		}
	}
}

// degree_exponent is in the fingerprint with degree negatives only, unset
// as its default: a checkpoint of one power refuses a config of another.
func TestDegreeExponentFingerprinted(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), "dimension = 4\n", 1)
	cfg.Negatives = "buffer"
	if _, ok := train.Fingerprint(cfg, "s")["degree_exponent"]; ok {
		t.Error("negatives = buffer: degree_exponent in the fingerprint")
	}
	unset, quarter, one := *cfg, *cfg, *cfg
	for _, c := range []*config.Config{&unset, &quarter, &one} {
		c.Negatives = "buffer_degree"
	}
	quarter.DegreeExponent, one.DegreeExponent = 0.25, 1
	if d := train.DiffFingerprints(train.Fingerprint(&unset, "s"), train.Fingerprint(&quarter, "s")); len(d) > 0 {
		t.Errorf("unset and its default differ: %v", d)
	}
	if d := train.DiffFingerprints(train.Fingerprint(&quarter, "s"), train.Fingerprint(&one, "s")); len(d) != 1 || !strings.Contains(d[0], "degree_exponent: checkpoint has 0.25, config has 1") {
		t.Errorf("0.25 against 1: %v", d)
	}
}

// A run over its budget is refused before it starts, naming the smallest
// num_partitions that would fit; a checkpoint larger than the free disk
// space is refused too.
func TestCheckBudgetRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20000), "dimension = 400\nworkers = 1\neval_fraction = 0\n", 1)
	st := openStore(t, cfg)
	pr, err := train.Predict(cfg, st, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Fits() || train.CheckBudget(cfg, st, pr) != nil {
		t.Fatalf("no budget: %+v", pr)
	}
	// The table is 20000 x 401 x 4 bytes (30.6 MiB): a budget of the rest
	// and a third of it needs a few partitions.
	budget := pr.Peak - pr.PartBytes*2/3
	pr, err = train.Predict(cfg, st, budget, "memory_limit")
	if err != nil {
		t.Fatal(err)
	}
	err = train.CheckBudget(cfg, st, pr)
	if !errors.Is(err, train.ErrBudget) || !regexp.MustCompile(`more than the [0-9.]+ [KMG]iB of memory_limit; num_partitions = [2-9] \(now 1\) would fit`).MatchString(err.Error()) {
		t.Errorf("refusal: %v", err)
	}
	err = train.CheckBudget(cfg, st, &train.Prediction{Peak: 10 << 30, Budget: 1 << 10, BudgetFrom: "--memory-limit", WorkBytes: 1 << 30})
	if !errors.Is(err, train.ErrBudget) || !strings.Contains(err.Error(), "no num_partitions up to 4096 fits") {
		t.Errorf("nothing fits: %v", err)
	}
	if err := train.CheckDisk(cfg, pr, pr.CheckpointPeak); err != nil {
		t.Errorf("disk enough: %v", err)
	}
	err = train.CheckDisk(cfg, pr, pr.CheckpointPeak-1)
	if !errors.Is(err, train.ErrBudget) || !strings.Contains(err.Error(), cfg.CheckpointPath+": checkpoints need about") {
		t.Errorf("disk short: %v", err)
	}
	if free, err := train.DiskFree(filepath.Join(dir, "not", "yet")); err != nil || free == 0 {
		t.Errorf("free space of a directory to be made: %d, %v", free, err)
	}
}

// checkpoint_buckets says when a run commits, not what it trains: changing
// it keeps the checkpoint's fingerprint (a run may resume with another).
func TestCheckpointBucketsNotFingerprinted(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), "dimension = 4\n", 1)
	every := *cfg
	every.CheckpointBuckets = 7
	if d := train.DiffFingerprints(train.Fingerprint(cfg, "s"), train.Fingerprint(&every, "s")); len(d) > 0 {
		t.Errorf("checkpoint_buckets changes the fingerprint: %v", d)
	}
}
