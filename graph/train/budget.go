package train

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train/model"
)

// The memory model of a training run (docs/training.md, "Memory"): what
// the process holds at its peak, term by term, computed from the config
// and the store's counts before anything is allocated.
const (
	// edgeBytes is what the plan holds in memory per edge of the chunk
	// being trained: lhs, rhs and relation ids (4 bytes each), the
	// ordinal (8) and one of the shuffle's two index arrays (4; the other
	// is allocated, but its pages are touched only by the holdout and
	// stay out of memory); weightBytes more when the edges have weights.
	edgeBytes   = 24
	weightBytes = 4
	// runtimeBytes is the program and the Go runtime: code, stacks,
	// heap metadata, small objects (a train of a tiny graph peaks at
	// 24 MiB).
	runtimeBytes = 32 << 20
	// heapSlack is the share of the Go heap the collector adds to it, in
	// quarters: it lets the heap grow past what is live before it
	// collects (up to twice with GOGC = 100; measured between 1.5 and 2
	// times, the trainer collecting before every bucket), and the pages
	// the heap reached stay resident. The partitions and the workers'
	// row→slot indexes and summed gradients are not in the Go heap
	// (model.MapTable, model.NewMappedWorker): the heap is the workers'
	// scratch arrays, a chunk's edges and the model.
	heapSlack = 3
)

// Prediction is a training run's predicted peak memory and checkpoint disk
// space, with the terms that make them up.
type Prediction struct {
	Budget     uint64 // bytes the run may use (0: unknown)
	BudgetFrom string // what set the budget: "memory_limit", or "this machine's memory"

	Dim           int
	Resident      int    // partitions in memory at once (residentPartitions)
	PartBytes     uint64 // the partition buffer: the c largest partitions per type, embeddings and Adagrad state
	Buffer        int    // c, partition_buffer
	BufferFit     bool   // c was chosen as the largest that fits the budget (FitBuffer)
	Partitioned   bool   // some entity type has more than one partition
	Prefetch      bool   // one partition in flight (loaded ahead or written behind) fits in the budget
	PrefetchBytes uint64 // its bytes (0 when Prefetch is off)
	LargestPart   uint64 // bytes of the largest partition
	Workers       int
	WorkBytes     uint64 // every worker's scratch arrays (Go heap)
	SlotBytes     uint64 // every worker's row→slot indexes (mapped outside the Go heap)
	SlotTables    int    // row indexes per worker: one per side of a batch, one when both are one table
	GradBytes     uint64 // every worker's summed gradients of the rows a batch touches (mapped)
	BatchRows     uint64 // rows a batch touches per side, at most (GradBytes)
	EarlyRows     uint64 // tables large enough for early updates: the rows a worker's summed gradients hold at most (GradBytes), else 0
	ChunkEdges    int64  // edges of the plan's largest chunk
	GroupBuckets  int    // buckets prepared at once: 1, or with interleave_buckets at most min(c x c, the buckets of a pass)
	EdgeBytes     uint64 // the plan's arrays for that chunk
	ModelBytes    uint64 // relation operators and global embeddings, with Adagrad state
	DegreeBytes   uint64 // negatives = "buffer_degree": every entity's degree (4 bytes), the buffer's samplers (12 bytes a row) and the building of one (8 bytes a row of the largest partition: its weights and work lists)
	RuntimeBytes  uint64 // program, Go runtime and the heap's slack
	Peak          uint64 // the sum

	CheckpointBytes uint64 // every partition file and the model file
	CheckpointPeak  uint64 // before a commit: the partitions written since the last one are new files until the old ones go
}

// residentPartitions is the number of partitions a run holds at once: the
// partition buffer, c = partition_buffer per entity type (at most its
// partition count; buffer.go), plus, when
// ahead is set and some type is partitioned, the one in flight: written
// behind for the last checkpoint, then (once released) loaded ahead for
// the next bucket, never both (pipeline.go's prefetch).
func residentPartitions(cfg *config.Config, ahead bool) int {
	n, partitioned := 0, false
	for _, typ := range cfg.EntityTypes() {
		p := max(cfg.Entities[typ].NumPartitions, 1)
		n += min(cfg.Buffer(), p)
		partitioned = partitioned || p > 1
	}
	if ahead && partitioned {
		n++
	}
	return n
}

// shape is what the model reads from a store: each type's partition sizes
// (entity rows) and the largest chunk's edge count.
type shape struct {
	rows       map[string][]uint64
	chunkEdges int64
	// largestSet is the largest training edge set's edge count, skew its
	// largest bucket over its mean bucket (for other partition counts).
	largestSet int64
	skew       float64
	edgeBytes  int // per edge of a chunk
	// modelBytes and modelVectors describe the dense parameters.
	modelBytes   uint64
	modelVectors int
}

// Predict computes the run's peak memory and checkpoint size for cfg on
// store, against budget bytes (0: unknown; from names it). Prefetch is on
// when some type is partitioned and the budget holds one more of its
// partitions.
func Predict(cfg *config.Config, store Store, budget uint64, from string) (*Prediction, error) {
	s, err := storeShape(cfg, store)
	if err != nil {
		return nil, err
	}
	return predict(cfg, s, budget, from), nil
}

// storeShape reads a store's partition sizes and the plan's largest chunk.
func storeShape(cfg *config.Config, store Store) (shape, error) {
	s := shape{rows: map[string][]uint64{}, edgeBytes: edgeBytes}
	m, err := NewModel(cfg, store.NumRelations())
	if err != nil {
		return s, err
	}
	for _, v := range modelVectors(m) {
		s.modelBytes += 8 * uint64(len(v.P))
		s.modelVectors++
	}
	for _, typ := range cfg.EntityTypes() {
		counts, err := partitionRows(cfg, store, typ)
		if err != nil {
			return s, err
		}
		s.rows[typ] = counts
	}
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		return s, err
	}
	var largest int64
	l, r := p.Shape()
	for set := range p.NumEdgeSets() {
		if w, ok := store.(interface{ HasWeights(int) bool }); ok && w.HasWeights(p.StoreEdgeSet(set)) {
			s.edgeBytes = edgeBytes + weightBytes
		}
		var total, most int64
		for i := range l {
			for j := range r {
				n, err := store.NumEdges(p.StoreEdgeSet(set), graph.Bucket{Lhs: i, Rhs: j})
				if err != nil {
					return s, err
				}
				total, most = total+int64(n), max(most, int64(n))
			}
		}
		largest = max(largest, most)
		if total > s.largestSet {
			s.largestSet, s.skew = total, float64(most)*float64(l*r)/float64(total)
		}
	}
	chunks := int64(max(p.NumChunks(), 1))
	s.chunkEdges = (largest + chunks - 1) / chunks
	return s, nil
}

// predict is Predict on a shape.
func predict(cfg *config.Config, s shape, budget uint64, from string) *Prediction {
	d := uint64(cfg.Dimension)
	rowBytes := (d + 1) * 4
	pr := &Prediction{Budget: budget, BudgetFrom: from, Dim: cfg.Dimension, Workers: cfg.NumWorkers(), ChunkEdges: s.chunkEdges,
		Buffer: cfg.Buffer()}
	var largestRows, largestPartitioned, fresh, degreeBuild uint64
	smallestRows := uint64(math.MaxUint64)
	for _, typ := range cfg.EntityTypes() {
		counts := slices.Clone(s.rows[typ])
		for _, n := range counts {
			pr.CheckpointBytes += onDisk(24 + n*rowBytes)
		}
		slices.Sort(counts)
		slices.Reverse(counts)
		// Between two commits, each bucket evicts at most two partitions
		// of a type, written as new files, and a commit writes the c
		// resident ones.
		for _, n := range counts[:min(2*cfg.CheckpointEvery()+cfg.Buffer()-2, len(counts))] {
			fresh += onDisk(24 + n*rowBytes)
		}
		for _, n := range counts[:min(cfg.Buffer(), len(counts))] {
			pr.PartBytes += n * rowBytes
			if cfg.DegreeNegatives() {
				pr.DegreeBytes += 12 * n
			}
		}
		if cfg.DegreeNegatives() {
			for _, n := range counts {
				pr.DegreeBytes += 4 * n
			}
			if len(counts) > 0 {
				degreeBuild = max(degreeBuild, 8*counts[0])
			}
		}
		if len(counts) > 0 {
			smallestRows = min(smallestRows, counts[len(counts)-1])
			largestRows = max(largestRows, counts[0])
			if len(counts) > 1 {
				largestPartitioned = max(largestPartitioned, counts[0])
			}
		}
	}
	pr.DegreeBytes += degreeBuild
	pr.LargestPart = largestRows * rowBytes
	pr.WorkBytes = workBytes(cfg, d, largestRows)
	pr.SlotBytes, pr.SlotTables = slotBytes(cfg, largestRows), int(slotTables(cfg))
	pr.BatchRows = batchRows(cfg, largestRows)
	pr.GradBytes = uint64(cfg.NumWorkers()) * 2 * pr.BatchRows * d * 4
	if rows, ok := earlyRows(cfg, smallestRows, d); ok && rows < 2*pr.BatchRows {
		pr.EarlyRows = rows
		pr.GradBytes = uint64(cfg.NumWorkers()) * rows * d * 4
	}
	pr.GroupBuckets = 1
	if cfg.InterleaveBuckets { // a group holds its buckets' chunks at once (group.go)
		l, r := cfg.BucketShape()
		pr.GroupBuckets = min(cfg.Buffer()*cfg.Buffer(), l*r)
	}
	pr.EdgeBytes = uint64(s.chunkEdges) * uint64(s.edgeBytes) * uint64(pr.GroupBuckets)
	pr.ModelBytes = s.modelBytes
	model := onDisk(12 + pr.ModelBytes + 4*uint64(s.modelVectors))
	pr.CheckpointBytes += model
	pr.CheckpointPeak = pr.CheckpointBytes + fresh + model
	pr.Resident = residentPartitions(cfg, false)
	pr.total()
	pr.Partitioned = largestPartitioned > 0
	if ahead := largestPartitioned * rowBytes; ahead > 0 {
		with := *pr
		with.PrefetchBytes, with.Prefetch, with.Resident = ahead, true, residentPartitions(cfg, true)
		with.total()
		if budget == 0 || with.Peak <= budget {
			*pr = with
		}
	}
	return pr
}

// workBytes is what the workers hold in the Go heap: each its scratch
// arrays for one chunk of positives and its arrays for early updates;
// worker 0 also ranks the held-out edges, with the eval_ negative counts,
// when eval_fraction is set.
func workBytes(cfg *config.Config, d, largest uint64) uint64 {
	train := trainChunkBytes(cfg, d, largest)
	w := uint64(cfg.NumWorkers()) * (train + earlyBytes(cfg))
	if cfg.EvalFraction > 0 {
		w += chunkBytes(cfg, d, largest) - train
	}
	return w
}

// slotBytes is the workers' row→slot indexes (model's rowGrads, mapped
// outside the Go heap): each worker one int32 per row of the largest
// partition, for each table a batch trains (slotTables).
func slotBytes(cfg *config.Config, largest uint64) uint64 {
	return uint64(cfg.NumWorkers()) * slotTables(cfg) * largest * 4
}

// slotTables is the number of row indexes a worker holds: one per side of
// a batch, or one when both sides of every batch are the same table (every
// relation's lhs and rhs one unpartitioned type).
func slotTables(cfg *config.Config) uint64 {
	for _, r := range cfg.Relations {
		if r.Lhs != r.Rhs || cfg.Entities[r.Lhs].NumPartitions > 1 {
			return 2
		}
	}
	return 1
}

// batchRows bounds the rows of one table a batch touches, whose gradients
// a worker sums before its Adagrad steps (model's rowGrads, one per side):
// the batch's positives and, for every chunk of positives, its uniform
// negatives (every row with all_negs), at most the largest partition.
func batchRows(cfg *config.Config, largest uint64) uint64 {
	batch, uniform := uint64(cfg.BatchSize), uint64(cfg.NumUniformNegs)
	rows := batch + batchChunks(cfg)*uniform
	for _, r := range cfg.Relations {
		if r.AllNegs {
			rows = largest
		}
	}
	return min(rows, largest)
}

// earlyRows bounds the rows whose gradients one worker sums, all its
// tables together, when every table of the run is large enough for early
// updates (model's early.go): each batch's positives, and of its uniform
// negatives those that occur more than once or on a positive's row, the
// others being updated early. Of D draws over n rows, about D²/n repeat a
// row and D·positives/n land on a positive; the bound takes twice that.
// A table that takes both sides of a batch (one unpartitioned type, or a
// bucket (i, i) of a relation from a type to itself) takes both sides'
// positives and draws; the worker's other table then holds one side's at
// most.
func earlyRows(cfg *config.Config, smallest, d uint64) (uint64, bool) {
	uniform := uint64(cfg.NumUniformNegs)
	if uniform == 0 || smallest == 0 || smallest*d*4 < model.EarlyMin {
		return 0, false
	}
	sameType := false
	for _, r := range cfg.Relations {
		if r.AllNegs {
			return 0, false
		}
		sameType = sameType || r.Lhs == r.Rhs
	}
	pos, draws := uint64(cfg.BatchSize), batchChunks(cfg)*uniform
	side := pos + 2*draws*(draws+pos)/smallest
	both := 2*pos + 2*(2*draws)*(2*draws+2*pos)/smallest
	switch {
	case slotTables(cfg) == 1:
		return both, true
	case sameType:
		return both + side, true
	}
	return 2 * side, true
}

// batchChunks is the number of chunks of positives in a batch: chunks of
// num_batch_negs positives, else num_uniform_negs, else the whole batch.
func batchChunks(cfg *config.Config) uint64 {
	batch := uint64(cfg.BatchSize)
	chunk := batch
	switch {
	case cfg.NumBatchNegs > 0:
		chunk = uint64(cfg.NumBatchNegs)
	case cfg.NumUniformNegs > 0:
		chunk = uint64(cfg.NumUniformNegs)
	}
	return (batch + chunk - 1) / max(chunk, 1)
}

// earlyBytes is what a worker holds in the Go heap for early updates
// (model's early.go): a batch's uniform negatives of both sides, drawn up
// front, and the census of a batch's rows for each side, sized as the
// model sizes it.
func earlyBytes(cfg *config.Config) uint64 {
	batch, uniform := uint64(cfg.BatchSize), uint64(cfg.NumUniformNegs)
	if uniform == 0 {
		return 0
	}
	draws := batchChunks(cfg) * 2 * uniform
	keys := uint64(1) << max(bits.Len64(2*(2*batch+draws)), 10)
	return 4*draws + 2*4*keys
}

// diskBlock is the allocation unit assumed of checkpoint_path's file
// system: a file takes whole blocks.
const diskBlock = 4096

// onDisk is the space a file of n bytes takes.
func onDisk(n uint64) uint64 { return (n + diskBlock - 1) / diskBlock * diskBlock }

// total adds the terms up, with the runtime's share of the Go heap (the
// partitions and the workers' slots and gradients are outside it).
func (pr *Prediction) total() {
	heap := pr.heap()
	pr.RuntimeBytes = runtimeBytes + heap*heapSlack/4
	pr.Peak = pr.PartBytes + pr.PrefetchBytes + pr.mapped() + heap + pr.RuntimeBytes
}

// heap is what the model puts in the Go heap: the workers' scratch, a
// chunk's edges, the model and the degrees of degree negatives.
func (pr *Prediction) heap() uint64 {
	return pr.WorkBytes + pr.EdgeBytes + pr.ModelBytes + pr.DegreeBytes
}

// mapped is what the workers map outside the Go heap: their row→slot
// indexes and summed gradients.
func (pr *Prediction) mapped() uint64 { return pr.SlotBytes + pr.GradBytes }

// HeapLimit is the Go heap's share of a memory limit of n bytes (for
// debug.SetMemoryLimit): the partitions and the workers' slots and
// gradients are mapped outside the Go heap, so the runtime, which counts
// only its own memory, must keep the rest under n less what they take.
func (pr *Prediction) HeapLimit(n uint64) uint64 {
	outside := pr.PartBytes + pr.PrefetchBytes + pr.mapped()
	return n - min(outside, n-min(n, 64<<20))
}

// Fits reports whether the predicted peak is within the budget (an
// unknown budget holds anything).
func (pr *Prediction) Fits() bool { return pr.Budget == 0 || pr.Peak <= pr.Budget }

// String prints the prediction with its terms, one per line.
func (pr *Prediction) String() string {
	var b strings.Builder
	budget := "no known budget"
	if pr.Budget > 0 {
		budget = fmt.Sprintf("of %s (%s)", Bytes(pr.Budget), pr.BudgetFrom)
	}
	fmt.Fprintf(&b, "memory: %s predicted at the peak, %s\n", Bytes(pr.Peak), budget)
	fmt.Fprintf(&b, "  partitions  %s: %d resident (a buffer of %d per entity type), %d rows of dimension %d at most each\n",
		Bytes(pr.PartBytes), pr.Resident-boolInt(pr.Prefetch), pr.Buffer, pr.LargestPart/uint64((pr.Dim+1)*4), pr.Dim)
	if pr.BufferFit {
		fmt.Fprintf(&b, "  partition_buffer = %d: the largest buffer that fits the budget (set partition_buffer to choose)\n", pr.Buffer)
	}
	switch {
	case pr.Prefetch:
		fmt.Fprintf(&b, "  prefetch    %s: 1 partition in flight, written behind then loaded ahead\n", Bytes(pr.PrefetchBytes))
	case pr.Partitioned:
		fmt.Fprintf(&b, "  prefetch    off: the budget cannot hold a partition in flight\n")
	}
	fmt.Fprintf(&b, "  workers     %s: %d workers' scratch arrays\n", Bytes(pr.WorkBytes), pr.Workers)
	tables := "two tables"
	if pr.SlotTables == 1 {
		tables = "one table"
	}
	fmt.Fprintf(&b, "  slots       %s: %d workers' row indexes of %s (mapped)\n", Bytes(pr.SlotBytes), pr.Workers, tables)
	if pr.EarlyRows > 0 {
		fmt.Fprintf(&b, "  gradients   %s: %d workers' summed gradients of up to %d rows, a batch's positives and repeated negatives (mapped; the others are updated early)\n", Bytes(pr.GradBytes), pr.Workers, pr.EarlyRows)
	} else {
		fmt.Fprintf(&b, "  gradients   %s: %d workers' summed gradients of the %d rows a batch touches per side (mapped)\n", Bytes(pr.GradBytes), pr.Workers, pr.BatchRows)
	}
	if pr.GroupBuckets > 1 {
		fmt.Fprintf(&b, "  edges       %s: the largest chunk's %d edges, for each of up to %d buckets trained together\n", Bytes(pr.EdgeBytes), pr.ChunkEdges, pr.GroupBuckets)
	} else {
		fmt.Fprintf(&b, "  edges       %s: the largest chunk's %d edges\n", Bytes(pr.EdgeBytes), pr.ChunkEdges)
	}
	fmt.Fprintf(&b, "  model       %s: relation operators and global embeddings\n", Bytes(pr.ModelBytes))
	if pr.DegreeBytes > 0 {
		fmt.Fprintf(&b, "  degrees     %s: every entity's degree and the buffer's degree samplers (negatives = \"buffer_degree\")\n", Bytes(pr.DegreeBytes))
	}
	fmt.Fprintf(&b, "  runtime     %s: program and Go runtime, and %d/4 of the heap\n", Bytes(pr.RuntimeBytes), heapSlack)
	fmt.Fprintf(&b, "disk: %s per checkpoint, up to %s while one is written\n", Bytes(pr.CheckpointBytes), Bytes(pr.CheckpointPeak))
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Bytes prints a byte count with a binary unit.
func Bytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
