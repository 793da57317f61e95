package train

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// budgetConfig is a ComplEx config of one type "node" (partitions p) and,
// when other > 0, a second type "tag" with other partitions.
func budgetConfig(t *testing.T, p, other int, extra string) *config.Config {
	t.Helper()
	rel := "[[relations]]\nname = \"r\"\nlhs = \"node\"\nrhs = \"node\"\noperator = \"complex_diagonal\"\n"
	types := fmt.Sprintf("[entities.node]\nnum_partitions = %d\n", p)
	if other > 0 {
		types += fmt.Sprintf("[entities.tag]\nnum_partitions = %d\n", other)
		rel += "[[relations]]\nname = \"t\"\nlhs = \"node\"\nrhs = \"tag\"\n"
	}
	text := "entity_path = \"e\"\nedge_paths = [\"p\"]\ncheckpoint_path = \"c\"\ndimension = 100\nworkers = 2\nbatch_size = 1000\n" +
		"num_batch_negs = 50\nnum_uniform_negs = 1000\nloss_fn = \"softmax\"\n" + extra + types + rel
	if !strings.Contains(extra, "eval_fraction") {
		text = "eval_fraction = 0\n" + text
	}
	cfg, err := config.Parse([]byte(text), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The resident partitions: c per type (partition_buffer, 2 by default, at
// most the type's partitions), and one in flight (written behind, then loaded
// ahead) with prefetch, when some type is partitioned.
func TestResidentPartitions(t *testing.T) {
	for _, c := range []struct{ p, other, want, ahead, c int }{
		{1, 0, 1, 1, 0}, {4, 0, 2, 3, 0}, {16, 0, 2, 3, 0}, {4, 1, 3, 4, 0}, {1, 1, 2, 2, 0},
		{16, 0, 4, 5, 4}, {3, 0, 3, 4, 4}, {4, 1, 4, 5, 3},
	} {
		cfg := budgetConfig(t, c.p, c.other, "")
		cfg.PartitionBuffer = c.c
		if got, ahead := residentPartitions(cfg, false), residentPartitions(cfg, true); got != c.want || ahead != c.ahead {
			t.Errorf("num_partitions %d and %d: %d resident, %d with prefetch; want %d and %d", c.p, c.other, got, ahead, c.want, c.ahead)
		}
	}
}

// The model's terms, on the shape: 1 M entities in 4 partitions,
// d = 100, ComplEx, softmax, 1000 uniform negatives, 2 workers.
func TestPredictTerms(t *testing.T) {
	cfg := budgetConfig(t, 4, 0, "")
	rows := []uint64{250_000, 250_001, 249_999, 250_000}
	s := shape{rows: map[string][]uint64{"node": rows}, chunkEdges: 625_000, modelBytes: 1600, modelVectors: 2, edgeBytes: 24}
	pr := predict(cfg, s, 0, "")
	part := uint64(250_001 * 101 * 4)
	train := trainChunkBytes(cfg, 100, 250_001)
	early := uint64(1000+2*20_000*21_000/249_999) + uint64(2000+2*40_000*42_000/249_999)
	want := Prediction{Dim: 100, Resident: 3, Buffer: 2, Partitioned: true, Prefetch: true, Workers: 2, ChunkEdges: 625_000, GroupBuckets: 1,
		PartBytes: uint64(500_001 * 101 * 4), PrefetchBytes: part, LargestPart: part,
		WorkBytes: 2 * (train + 4*40_000 + 2*4*(1<<17)), SlotBytes: 2 * 2 * 250_001 * 4, SlotTables: 2, EdgeBytes: 625_000 * 24, ModelBytes: 1600,
		// 100 MB partitions: early updates leave the summed gradients the
		// positives and twice the expected repeats of 20 chunks x 1000
		// draws per side over the smallest partition's rows; a bucket (i,
		// i) puts both sides in one table.
		BatchRows: 21_000, EarlyRows: early, GradBytes: 2 * early * 100 * 4,
		CheckpointBytes: onDisk(12 + 1600 + 8)}
	for _, r := range rows {
		want.CheckpointBytes += onDisk(24 + r*404)
	}
	// The partitions and the workers' slots and gradients are outside the
	// Go heap: the runtime's share is of the rest.
	heap := want.WorkBytes + want.EdgeBytes + want.ModelBytes
	want.RuntimeBytes = 32<<20 + heap*3/4
	want.Peak = want.PartBytes + want.PrefetchBytes + want.SlotBytes + want.GradBytes + heap + want.RuntimeBytes
	// A commit every 4 buckets (the default for P = 4): before it, every
	// partition may have a new file beside its committed one.
	want.CheckpointPeak = 2 * want.CheckpointBytes
	if *pr != want {
		t.Errorf("prediction\n %+v\nwant\n %+v", *pr, want)
	}
	// A commit after every bucket: the bucket's two partitions (the
	// largest two at most) are new files.
	cfg.CheckpointBuckets = 1
	if got := predict(cfg, s, 0, "").CheckpointPeak; got != want.CheckpointBytes+onDisk(24+250_001*404)+onDisk(24+250_000*404)+onDisk(12+1600+8) {
		t.Errorf("checkpoint_buckets = 1: disk peak %d", got)
	}
	cfg.CheckpointBuckets = 0
	// The scratch of one worker: k = 50 positives against 1050 candidates.
	if train != 4*(6*50*100+3*1050*100+2*50*1050+4*1000) {
		t.Errorf("a worker's scratch: %d bytes", train)
	}
	// A budget that holds the bucket but not the prefetch turns it off.
	off := predict(cfg, s, want.Peak-1, "memory_limit")
	if off.Prefetch || off.PrefetchBytes != 0 || off.Resident != 2 || off.Peak >= want.Peak || !off.Fits() {
		t.Errorf("budget %d: %+v", want.Peak-1, *off)
	}
	// A buffer of 3: the three largest partitions resident, one in
	// flight; a commit writes up to 2 per bucket and the 3 resident.
	cfg.PartitionBuffer = 3
	b3 := predict(cfg, s, 0, "")
	if b3.Resident != 4 || b3.Buffer != 3 || b3.PartBytes != uint64((250_001+250_000+250_000)*404) ||
		b3.Peak != want.Peak+uint64(250_000*404) {
		t.Errorf("partition_buffer = 3: %+v", *b3)
	}
	// Interleaved buckets: a group prepares up to c x c buckets at once
	// (3 x 3), never more than a pass's 4 x 4.
	cfg.InterleaveBuckets = true
	for _, c := range []int{3, 5} {
		cfg.PartitionBuffer = c
		g := predict(cfg, s, 0, "")
		n := uint64(min(c*c, 16))
		if g.GroupBuckets != int(n) || g.EdgeBytes != n*625_000*24 || g.Peak <= b3.Peak {
			t.Errorf("interleave_buckets, partition_buffer = %d: %d buckets, edges %d bytes", c, g.GroupBuckets, g.EdgeBytes)
		}
	}
	cfg.InterleaveBuckets, cfg.CheckpointBuckets, cfg.PartitionBuffer = false, 0, 0
	// Degree negatives: 4 bytes of degree for every entity and a 12-byte
	// sampler row for each row of the buffer's two largest partitions,
	// and 8 bytes a row of the largest while its sampler is built, in the
	// Go heap (with its slack).
	cfg.Negatives = "buffer_degree"
	dg := predict(cfg, s, 0, "")
	wantDeg := uint64(4*1_000_000 + 12*500_001 + 8*250_001)
	if dg.DegreeBytes != wantDeg || dg.Peak != want.Peak+wantDeg+wantDeg*3/4 || !strings.Contains(dg.String(), "degrees") {
		t.Errorf("negatives = buffer_degree: degrees %d bytes (want %d), peak %d against %d", dg.DegreeBytes, wantDeg, dg.Peak, want.Peak)
	}
	cfg.Negatives = ""
	// With eval_fraction, worker 0 also holds the eval_ negatives' scratch.
	ev := budgetConfig(t, 4, 0, "eval_fraction = 0.05\neval_num_uniform_negs = 5000\n")
	if e := predict(ev, s, 0, ""); e.WorkBytes != want.WorkBytes+chunkBytes(ev, 100, 250_001)-train || e.WorkBytes <= want.WorkBytes {
		t.Errorf("with holdout: workers %d, without %d", e.WorkBytes, want.WorkBytes)
	}
}

// The smallest partition count that fits is the first whose prediction
// fits, and the one below does not.
func TestSmallestFit(t *testing.T) {
	cfg := budgetConfig(t, 1, 0, "")
	s := shape{rows: map[string][]uint64{"node": {1_000_000}}, chunkEdges: 10_000_000, largestSet: 10_000_000, skew: 1, modelBytes: 1600, modelVectors: 2, edgeBytes: 24}
	full := predict(cfg, s, 0, "")
	budget := full.Peak / 3
	p, fit := smallestFit(cfg, s, budget, "memory_limit")
	if fit == nil || !fit.Fits() || p < 2 {
		t.Fatalf("budget %d of a %d peak: p %d, %+v", budget, full.Peak, p, fit)
	}
	if p > 2 {
		if _, below := smallestFit(cfg, s, fit.Peak-1, "memory_limit"); below == nil {
			t.Errorf("nothing fits below the found count's peak")
		}
		c := budgetConfig(t, p-1, 0, "")
		per := (uint64(1_000_000) + uint64(p-2)) / uint64(p-1)
		h := s
		h.rows = map[string][]uint64{"node": {per, per}}
		h.chunkEdges = int64(10_000_000 / ((p - 1) * (p - 1)))
		if pr := predict(c, h, budget, "memory_limit"); pr.Fits() {
			t.Errorf("num_partitions %d fits too (%d of %d), but %d was named", p-1, pr.Peak, budget, p)
		}
	}
	if _, none := smallestFit(cfg, s, 1<<20, "memory_limit"); none != nil {
		t.Errorf("1 MiB fits with %+v", *none)
	}
}

// The Go heap's limit under a memory limit leaves out the partitions and
// the workers' slots and gradients (mapped outside the heap), and never
// falls under 64 MiB.
func TestHeapLimit(t *testing.T) {
	pr := &Prediction{PartBytes: 600 << 20, PrefetchBytes: 250 << 20, SlotBytes: 20 << 20, GradBytes: 30 << 20, WorkBytes: 7 << 20}
	for _, c := range []struct{ n, want uint64 }{
		{2 << 30, 2<<30 - 900<<20}, {900 << 20, 64 << 20}, {950 << 20, 64 << 20}, {1000 << 20, 100 << 20}, {32 << 20, 32 << 20},
	} {
		if got := pr.HeapLimit(c.n); got != c.want {
			t.Errorf("HeapLimit(%d MiB) = %d MiB, want %d MiB", c.n>>20, got>>20, c.want>>20)
		}
	}
}

// On tables too small for early updates (d = 10: 10 MB partitions), a
// run with all_negs and one without uniform negatives, the gradients term
// stays the bound of every row a batch touches; one table for both sides
// takes both sides' positives and draws.
func TestEarlyRows(t *testing.T) {
	s := shape{rows: map[string][]uint64{"node": {250_000, 250_001, 249_999, 250_000}}, chunkEdges: 625_000, edgeBytes: 24}
	small := budgetConfig(t, 4, 0, "")
	small.Dimension = 10
	allNegs := budgetConfig(t, 4, 0, "")
	allNegs.Relations[0].AllNegs = true
	none := budgetConfig(t, 4, 0, "")
	none.NumUniformNegs = 0
	for name, cfg := range map[string]*config.Config{"d = 10": small, "all_negs": allNegs, "no uniform negatives": none} {
		pr := predict(cfg, s, 0, "")
		if pr.EarlyRows != 0 || pr.BatchRows != batchRows(cfg, 250_001) || pr.GradBytes != 2*2*pr.BatchRows*uint64(cfg.Dimension)*4 {
			t.Errorf("%s: early rows %d, %d rows, gradients %d", name, pr.EarlyRows, pr.BatchRows, pr.GradBytes)
		}
	}
	// Two types, no relation from a type to itself: each table one side.
	two := budgetConfig(t, 4, 4, "")
	two.Relations = two.Relations[1:]
	if rows, ok := earlyRows(two, 250_000, 100); !ok || rows != 2*(1000+2*20_000*21_000/250_000) {
		t.Errorf("two types: %d rows (early %v)", rows, ok)
	}
	one := budgetConfig(t, 1, 0, "")
	if rows, ok := earlyRows(one, 4_000_000, 100); !ok || rows != 2000+2*40_000*42_000/4_000_000 {
		t.Errorf("one table: %d rows (early %v)", rows, ok)
	}
	if pr := predict(one, shape{rows: map[string][]uint64{"node": {4_000_000}}, chunkEdges: 1000, edgeBytes: 24}, 0, ""); pr.GradBytes != 2*pr.EarlyRows*100*4 || pr.EarlyRows == 0 {
		t.Errorf("one table: gradients %d for %d rows", pr.GradBytes, pr.EarlyRows)
	}
}

// The rows a batch touches per side, whose summed gradients a worker
// holds: the batch's positives and each chunk's uniform negatives (1000
// positives in chunks of 50, 1000 negatives each: 21,000), at most the
// largest partition; every row with all_negs.
func TestBatchRows(t *testing.T) {
	for _, c := range []struct {
		batchNegs, uniform int
		largest, want      uint64
	}{
		{50, 1000, 1_000_000, 21_000},
		{50, 1000, 5_000, 5_000},
		{0, 1000, 1_000_000, 2_000}, // one chunk of the 1000 uniform
		{50, 0, 1_000_000, 1_000},
	} {
		cfg := budgetConfig(t, 4, 0, "")
		cfg.NumBatchNegs, cfg.NumUniformNegs = c.batchNegs, c.uniform
		if got := batchRows(cfg, c.largest); got != c.want {
			t.Errorf("%d batch and %d uniform negatives, largest %d: %d rows, want %d", c.batchNegs, c.uniform, c.largest, got, c.want)
		}
	}
	cfg := budgetConfig(t, 4, 0, "")
	cfg.Relations[0].AllNegs = true
	if got := batchRows(cfg, 7_777); got != 7_777 {
		t.Errorf("all_negs: %d rows, want the partition's 7777", got)
	}
}

// A worker holds a row index per side of a batch, one when both sides are
// always the same table (one unpartitioned type): the trainer then passes
// the same table as lhs and rhs, and the worker sums both sides' gradients
// in one index.
func TestSlotTables(t *testing.T) {
	for _, c := range []struct {
		p, other int
		want     uint64
	}{{1, 0, 1}, {4, 0, 2}, {1, 1, 2}, {4, 1, 2}} {
		cfg := budgetConfig(t, c.p, c.other, "")
		if got := slotTables(cfg); got != c.want {
			t.Errorf("num_partitions %d and %d: %d row indexes per worker, want %d", c.p, c.other, got, c.want)
		}
		if got := slotBytes(cfg, 1000); got != 2*c.want*1000*4 {
			t.Errorf("num_partitions %d and %d: slots of 2 workers over 1000 rows: %d bytes", c.p, c.other, got)
		}
	}
	s := shape{rows: map[string][]uint64{"node": {1000}}, chunkEdges: 100, edgeBytes: 24}
	if out := predict(budgetConfig(t, 1, 0, ""), s, 0, "").String(); !strings.Contains(out, "2 workers' row indexes of one table (mapped)") {
		t.Errorf("prediction:\n%s", out)
	}
}
