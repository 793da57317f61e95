package model

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// scaleRows is BenchmarkStepScale's table: a million entities, as the
// scale benchmarks' generated graph (graph/train's BenchmarkTrainScaleIO).
const scaleRows = 1_000_000

// scaleTables holds BenchmarkStepScale's tables, by huge pages on (true)
// and off, made once per process (both stay, so that neither reuses the
// other's memory).
var scaleTables = map[bool]*Table{}

// BenchmarkStepScale is BenchmarkStep's batch (complex_diagonal, dot,
// softmax, 1000 positives in chunks of 50, 1000 uniform negatives per
// chunk, both sides) at d = 100 on a table of a million entities (400 MB of
// embeddings: rows are no longer in cache), one relation, uniform
// positives, a new batch each step, as this package runs it (tables on
// transparent huge pages on Linux, rows prefetched) next to a baseline
// without one of the two: hugepages (the table and the worker's arrays on
// small pages), prefetch (no prefetching),
// neither (small pages, no prefetching: the code before both) and early
// (every row updated after the batch: no early updates, early.go). Each
// iteration is one step of each, alternating which goes first, so that the
// baseline shares the machine's load. It reports cpu-edges/s and
// base-cpu-edges/s (edges per second of the thread's CPU time, the figure a
// loaded machine moves least), their ratio speedup, and huge-MiB, the
// table's memory the kernel put on huge pages (0 when THP is "never").
//
//	go test ./graph/train/model -run '^$' -bench StepScale -benchtime 40x -count 5
func BenchmarkStepScale(b *testing.B) {
	b.Run("hugepages", func(b *testing.B) { stepScale(b, stepArm{huge: false, ahead: prefetchAhead}) })
	b.Run("prefetch", func(b *testing.B) { stepScale(b, stepArm{huge: true, ahead: 0}) })
	b.Run("neither", func(b *testing.B) { stepScale(b, stepArm{huge: false, ahead: 0}) })
	b.Run("early", func(b *testing.B) { stepScale(b, stepArm{huge: true, ahead: prefetchAhead, late: true}) })
}

// stepArm is one setting BenchmarkStepScale times.
type stepArm struct {
	huge  bool // table and worker arrays on huge pages
	ahead int  // Worker.ahead
	late  bool // Worker.late
	tab   *Table
	w     *Worker
	rng   *rand.Rand
	batch Batch
	cpu   time.Duration
}

// stepScale times steps of the package's setting interleaved with steps
// of base.
func stepScale(b *testing.B, base stepArm) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	arms := [2]*stepArm{{huge: true, ahead: prefetchAhead}, &base}
	for _, a := range arms {
		was := SetMemoryHints(a.huge)
		if a.tab = scaleTables[a.huge]; a.tab == nil {
			a.tab = NewTable(scaleRows, 100, 1e-3, rand.New(rand.NewPCG(5, 6)))
			scaleTables[a.huge] = a.tab
		}
		op, _ := NewOperator("complex_diagonal", 100)
		m, err := New(Settings{Dim: 100, Comparator: "dot", Loss: "softmax", NumBatchNegs: 50, NumUniformNegs: 1000,
			RegCoef: 1e-3, Lr: 0.1, RelationLr: 0.1, Dynamic: true}, []Relation{{Op: op, Weight: 1}}, 1)
		if err != nil {
			b.Fatal(err)
		}
		a.w, a.rng = NewWorker(m), rand.New(rand.NewPCG(7, 8))
		a.w.ahead, a.w.late = a.ahead, a.late
		a.batch = Batch{Lhs: make([]uint32, 1000), Rhs: make([]uint32, 1000), Rel: make([]uint32, 1000)}
		a.w.Step(a.batch, a.tab, a.tab, a.rng) // buffers grown
		SetMemoryHints(was)
	}
	b.ResetTimer()
	for n := range b.N {
		for j := range 2 {
			a := arms[(n+j)%2]
			for i := range a.batch.Lhs {
				a.batch.Lhs[i], a.batch.Rhs[i] = uint32(a.rng.IntN(scaleRows)), uint32(a.rng.IntN(scaleRows))
			}
			c0 := threadCPU(b)
			a.w.Step(a.batch, a.tab, a.tab, a.rng)
			a.cpu += threadCPU(b) - c0
		}
	}
	edges := float64(b.N * 1000)
	got, was := edges/arms[0].cpu.Seconds(), edges/arms[1].cpu.Seconds()
	b.ReportMetric(got, "cpu-edges/s")
	b.ReportMetric(was, "base-cpu-edges/s")
	b.ReportMetric(got/was, "speedup")
	b.ReportMetric(float64(hugeKiB(b, alignedInside(arms[0].tab.Emb)))/1024, "huge-MiB")
}

// threadCPU is the CPU time of the calling thread so far.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatalf("clock_gettime: %v", err)
	}
	return time.Duration(ts.Nano())
}
