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
// positives, a new batch each step. Each iteration is two steps, one on a
// table (and worker) on transparent huge pages, this package's default on
// Linux, and one on small pages (SetHugePages(false)), alternating which
// goes first, so that the baseline shares the machine's load. It reports
// on-cpu-edges/s and off-cpu-edges/s (edges per second of the thread's CPU
// time, the figure a loaded machine moves least), their ratio on/off, and
// huge-MiB, the table's memory the kernel put on huge pages (0 when THP is
// "never").
//
//	go test ./graph/train/model -run '^$' -bench StepScale -benchtime 40x -count 5
func BenchmarkStepScale(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	type arm struct {
		tab   *Table
		w     *Worker
		rng   *rand.Rand
		batch Batch
		cpu   time.Duration
	}
	var arms [2]*arm // huge pages on, off
	for i, hp := range []bool{true, false} {
		was := SetHugePages(hp)
		tab := scaleTables[hp]
		if tab == nil {
			tab = NewTable(scaleRows, 100, 1e-3, rand.New(rand.NewPCG(5, 6)))
			scaleTables[hp] = tab
		}
		op, _ := NewOperator("complex_diagonal", 100)
		m, err := New(Settings{Dim: 100, Comparator: "dot", Loss: "softmax", NumBatchNegs: 50, NumUniformNegs: 1000,
			RegCoef: 1e-3, Lr: 0.1, RelationLr: 0.1, Dynamic: true}, []Relation{{Op: op, Weight: 1}}, 1)
		if err != nil {
			b.Fatal(err)
		}
		a := &arm{tab: tab, w: NewWorker(m), rng: rand.New(rand.NewPCG(7, 8)),
			batch: Batch{Lhs: make([]uint32, 1000), Rhs: make([]uint32, 1000), Rel: make([]uint32, 1000)}}
		a.w.Step(a.batch, tab, tab, a.rng) // buffers grown
		SetHugePages(was)
		arms[i] = a
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
	on, off := edges/arms[0].cpu.Seconds(), edges/arms[1].cpu.Seconds()
	b.ReportMetric(on, "on-cpu-edges/s")
	b.ReportMetric(off, "off-cpu-edges/s")
	b.ReportMetric(on/off, "on/off")
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
