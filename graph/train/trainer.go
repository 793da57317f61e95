package train

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/alias"
	"github.com/batchprep/batchprep/internal/mix"
)

// Options are a run's hooks; none changes what is trained.
type Options struct {
	// Edges, when set, is called by the workers (concurrently) with the
	// number of edges of each batch they finish.
	Edges func(n int)
	// Bucket, when set, is called for each bucket, in training order, once
	// the checkpoint that holds it is committed (Event.Checkpoint).
	Bucket func(Event)
	// Log, when set, receives one JSON object per line per trained bucket.
	Log io.Writer
	// Note, when set, receives remarks for people (files left alone).
	Note func(string)
	// Init, when set, gives initial values (init_path): unlike the hooks
	// above it changes what is trained.
	Init Init
	// SequentialIO turns off partition I/O behind training: no partition
	// is loaded ahead or written behind, each bucket's writes (and
	// checkpoint) are done before the next bucket starts, and only the
	// current bucket's partitions are held (for a memory budget with no
	// room for the two extra partitions). Checkpoints and embeddings are the same either way.
	SequentialIO bool
}

// Event describes a trained and checkpointed bucket.
type Event struct {
	Position                   // the bucket's coordinates
	Bucket        graph.Bucket `json:"bucket"`
	Edges         int          `json:"edges"`   // trained
	Holdout       int          `json:"holdout"` // held out
	Loss          float64      `json:"loss"`    // mean per trained edge
	HoldoutBefore *Metrics     `json:"holdout_before,omitempty"`
	HoldoutAfter  *Metrics     `json:"holdout_after,omitempty"`
	IO            IOStats      `json:"io"`
	Seconds       float64      `json:"seconds"`
	// LoadWait and WriteWait are the seconds of the bucket's time spent
	// waiting for its partitions to load and for checkpoint writes (its
	// own written in turn, or the previous bucket's write behind draining).
	LoadWait    float64 `json:"load_wait_seconds"`
	WriteWait   float64 `json:"write_wait_seconds"`
	Checkpoint  int64   `json:"checkpoint,omitempty"` // the number of the checkpoint that holds it (its files' version)
	Done, Total int64   `json:"-"`                    // buckets trained so far, and in the whole plan
}

// Trainer trains a config's model on a store, committing a checkpoint into
// the config's checkpoint_path every Config.CheckpointEvery buckets, at the
// end of every epoch and when the run stops.
type Trainer struct {
	cfg     *config.Config
	store   Store
	plan    *plan.Plan
	m       *model.Model
	types   []string
	typeIdx map[string]int
	tables  map[tableKey]*model.Table
	dirty   map[tableKey]bool
	workers []*model.Worker
	man     *Manifest // the working manifest (during Run, ahead of the committed one)
	last    *Manifest // during Run, the last committed manifest
	dir     string
	opts    Options
	lock    *runLock // the run lock on dir, held from New to the end of Run
	ahead   *aheadLoad
	pending *pendingCheckpoint
	res     *residency // the partition buffer's content (buffer.go)
	look    *lookahead
	io      ioWaits
	epochIO []EpochIO // this run's partition I/O by epoch
	// every is the buckets between checkpoint commits (Config.CheckpointEvery);
	// sinceCommit counts the buckets stepped since the last commit, and
	// events holds their events until it is committed.
	every       int
	sinceCommit int
	events      []Event
	// resumedMidEpoch: Run started after the first bucket of an epoch.
	resumedMidEpoch bool
	// group holds the buckets of the current group not reached yet by
	// Run's loop, trained with its first (group.go).
	group []trained
	// clock decides when commits fall (commitclock.go); align: commits
	// wait for the end of a buffer state (checkpoint_buckets unset).
	clock commitClock
	align bool
	// degree holds every partition's entity degrees and samplers the
	// resident ones' degree samplers, with negatives = "buffer_degree"
	// (degrees.go).
	degree   map[tableKey][]uint32
	samplers map[tableKey]*alias.Table
	// balance holds the residency weights of one pass and the replay of
	// the buffer they are counted on, up to position at (balance.go).
	balance struct {
		pass, at Position
		weights  map[tableKey]uint64
		sim      *residency
	}
}

// New prepares a run: it validates the config for training, builds the plan
// and the model, locks checkpoint_path for the run (ErrInUse naming the
// holder when another run trains there), and, when it holds a checkpoint,
// checks that it was made with the same config (else ErrCheckpoint naming
// every differing key) and restores it. The lock is held until Run
// returns, or Close.
func New(cfg *config.Config, store Store, opts Options) (*Trainer, error) {
	t, err := newTrainer(cfg, store, opts)
	if err != nil {
		return nil, err
	}
	if t.lock, err = lockRun(t.dir, -1); err != nil {
		return nil, err
	}
	if err := t.restore(cfg, store); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// Close releases the checkpoint directory of a Trainer that will not Run
// (Run releases it when it returns).
func (t *Trainer) Close() { t.lock.release(); t.lock = nil }

// newTrainer builds a run's plan, model and workers, with no checkpoint.
func newTrainer(cfg *config.Config, store Store, opts Options) (*Trainer, error) {
	m, err := NewModel(cfg, store.NumRelations())
	if err != nil {
		return nil, err
	}
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, store: store, plan: p, m: m, types: cfg.EntityTypes(), typeIdx: map[string]int{},
		tables: map[tableKey]*model.Table{}, dirty: map[tableKey]bool{}, dir: cfg.CheckpointPath, opts: opts,
		every: cfg.CheckpointEvery(), align: AlignCommits(cfg), res: newResidency(cfg.Buffer())}
	t.look = newLookahead(t)
	for i, ty := range t.types {
		t.typeIdx[ty] = i
	}
	for range p.Options().Workers {
		t.workers = append(t.workers, model.NewMappedWorker(m))
	}
	if t.dir == "" {
		return nil, fmt.Errorf("train: checkpoint_path is required")
	}
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return nil, err
	}
	t.man = &Manifest{Version: ManifestVersion, Fingerprint: Fingerprint(cfg, store.Fingerprint())}
	if opts.Init != nil {
		if err := opts.Init.Model(m); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// restore continues from the checkpoint in checkpoint_path, if any.
func (t *Trainer) restore(cfg *config.Config, store Store) error {
	man, err := ReadManifest(t.dir)
	if err != nil || man == nil {
		return err
	}
	if err := refuseDistributed(man); err != nil {
		return err
	}
	if t.m, err = LoadModel(cfg, store.NumRelations(), store.Fingerprint(), t.dir, man); err != nil {
		return err
	}
	for w := range t.workers {
		t.workers[w].Release()
		t.workers[w] = model.NewMappedWorker(t.m)
	}
	t.man = man
	t.man.Distributed = nil // a finished distributed run, continued here
	return nil
}

// Model returns the model being trained.
func (t *Trainer) Model() *model.Model { return t.m }

// Plan returns the run's plan.
func (t *Trainer) Plan() *plan.Plan { return t.plan }

// Manifest returns the last committed checkpoint's manifest (empty before
// the first).
func (t *Trainer) Manifest() *Manifest {
	if t.last != nil {
		return t.last
	}
	return t.man
}

// IOWait returns the time the run's buckets waited for partition loads
// and for checkpoint writes (see Event.LoadWait).
func (t *Trainer) IOWait() (load, write time.Duration) { return t.io.totalLoad, t.io.totalWrite }

// TotalBuckets is the number of buckets the whole plan trains.
func (t *Trainer) TotalBuckets() int64 {
	l, r := t.plan.Shape()
	return int64(t.cfg.NumEpochs) * int64(t.plan.NumEdgeSets()) * int64(t.plan.NumChunks()) * int64(l*r)
}

// Run trains from the checkpoint's position to the end of the plan,
// committing a checkpoint every Config.CheckpointEvery buckets and after
// each epoch. When ctx is canceled it stops between batches (or, when
// buckets trained since the last commit are not committed yet, at the end
// of the current bucket) and returns ctx's error; the checkpoint then
// holds the last finished bucket, and a new run continues from there with
// exactly the batches an uninterrupted run would have trained. Partition I/O overlaps
// training unless Options.SequentialIO is set (pipeline.go).
func (t *Trainer) Run(ctx context.Context) (err error) {
	if err := t.relock(); err != nil {
		return err
	}
	defer t.Close()
	t.last, t.man = t.man, t.man.clone()
	defer func() {
		if e := t.finish(); err == nil {
			err = e
		}
		t.releaseAll()
	}()
	if err := t.removeStray(); err != nil {
		return err
	}
	pos := t.man.Next
	t.resumedMidEpoch = pos != Position{Epoch: pos.Epoch}
	weights := weightCheck{epoch: pos.Epoch}
	defer func() { t.noteWeights(&weights, true) }()
	l, r := t.plan.Shape()
	if pos.Epoch < t.cfg.NumEpochs {
		t.replayResidency(pos)
		if t.cfg.DegreeNegatives() && t.degree == nil {
			begin := time.Now()
			edges, err := t.countDegrees(ctx)
			if err != nil {
				return err
			}
			if t.opts.Note != nil {
				t.opts.Note(fmt.Sprintf("negatives = \"buffer_degree\": entity degrees counted from %d training edges in %.2f s; draws weighted by degree^%v", edges, time.Since(begin).Seconds(), t.cfg.DegreePower()))
			}
		}
	}
	for pos.Epoch < t.cfg.NumEpochs {
		start := time.Now()
		t.io.load, t.io.write = 0, 0
		b := t.bucketAt(pos)
		if err := t.swapIn(b); err != nil {
			return err
		}
		next := t.advance(pos, l*r)
		var nb *graph.Bucket
		if next.Epoch < t.cfg.NumEpochs {
			x := t.bucketAt(next)
			nb = &x
			t.prefetch(x)
		}
		// A bucket after buckets not yet committed is trained to its end
		// even if ctx is canceled: the state before it is no longer whole
		// anywhere, so the checkpoint after it is the one to commit.
		bctx := ctx
		if t.sinceCommit > 0 {
			bctx = context.WithoutCancel(ctx)
		}
		if len(t.group) == 0 { // the first bucket of a group (group.go)
			if t.group, err = t.trainGroup(bctx, t.groupAt(pos), &weights); err != nil {
				return err
			}
		}
		ev, loss := t.group[0].ev, t.group[0].loss
		t.group = t.group[1:]
		if err := t.join(start); err != nil { // the previous bucket's step
			return err
		}
		t.record(ev, loss)
		// (The last bucket commits anyway; a group is trained whole.)
		stop := ctx.Err() != nil && next.Epoch < t.cfg.NumEpochs && len(t.group) == 0
		if stop {
			nb = nil // commit now, everything written in turn
		}
		commit := t.clock.after(t, pos, next, len(t.group) > 0) || stop
		if stop {
			t.clock = commitClock{}
		}
		if err := t.checkpoint(next, ev, nb, start, commit); err != nil {
			return err
		}
		if stop {
			return ctx.Err()
		}
		if next.Epoch != pos.Epoch {
			t.noteWeights(&weights, t.resumedMidEpoch)
		}
		pos = next
	}
	return nil
}

// noteWeights passes the warning about negative edge weights, if any, to
// Options.Note.
func (t *Trainer) noteWeights(c *weightCheck, partial bool) {
	if s := c.note(partial); s != "" && t.opts.Note != nil {
		t.opts.Note(s)
	}
}

// commitAfter reports whether the step after the bucket at pos (followed
// by next) commits a checkpoint: after every t.every-th bucket of an epoch
// (counted across its edge sets and chunks), and after an epoch's last
// bucket.
func (t *Trainer) commitAfter(pos, next Position) bool {
	if next.Epoch != pos.Epoch {
		return true
	}
	l, r := t.plan.Shape()
	n := (pos.EdgeSet*t.plan.NumChunks()+pos.Chunk)*l*r + pos.Index
	return (n+1)%t.every == 0
}

// bucketAt is the bucket at pos.
func (t *Trainer) bucketAt(pos Position) graph.Bucket {
	return t.look.order(pos)[pos.Index]
}

// advance returns the position after pos.
func (t *Trainer) advance(pos Position, buckets int) Position {
	if pos.Index++; pos.Index < buckets {
		return pos
	}
	pos.Index = 0
	if pos.Chunk++; pos.Chunk < t.plan.NumChunks() {
		return pos
	}
	pos.Chunk = 0
	if pos.EdgeSet++; pos.EdgeSet < t.plan.NumEdgeSets() {
		return pos
	}
	pos.EdgeSet = 0
	pos.Epoch++
	return pos
}

// record adds a bucket's results to the epoch's history.
func (t *Trainer) record(ev Event, loss float64) {
	h := &t.man.History
	if len(*h) == 0 || (*h)[len(*h)-1].Epoch != ev.Epoch {
		*h = append(*h, EpochStats{Epoch: ev.Epoch})
	}
	e := &(*h)[len(*h)-1]
	// The loss is kept as a running mean per edge, weighted by edges.
	total := e.Loss*float64(e.Count) + loss
	e.Count += int64(ev.Edges)
	if e.Count > 0 {
		e.Loss = total / float64(e.Count)
	}
	if ev.HoldoutAfter != nil && ev.HoldoutAfter.Count > 0 {
		n := float64(ev.HoldoutAfter.Count)
		old := float64(e.Holdout)
		e.MRRBefore = (e.MRRBefore*old + ev.HoldoutBefore.MRR*n) / (old + n)
		e.MRRAfter = (e.MRRAfter*old + ev.HoldoutAfter.MRR*n) / (old + n)
		e.Holdout += ev.HoldoutAfter.Count
	}
	t.man.Buckets++
	t.man.Edges += int64(ev.Edges)
}

// tagNegatives and tagEval are the mix purpose tags of the uniform
// negatives of a training batch and of a holdout evaluation.
const (
	tagNegatives uint64 = 0x6e65676174697665 // "negative"
	tagEval      uint64 = 0x6576616c         // "eval"
)

// trainBuckets runs the Hogwild workers over the shares of pbs, one
// goroutine each, on the shared tables (invariant 2): worker w trains the
// batches of bucket order[w][k] in turn, each from its bucket's share,
// or, with order nil, pbs[0]'s share in order. It returns each bucket's
// summed loss and number of trained edges.
func (t *Trainer) trainBuckets(ctx context.Context, pbs []*plan.Prepared, order [][]int32) ([]float64, []int, error) {
	pools := t.negativePools()
	t.balancePools(pools, Position{Epoch: pbs[0].Epoch, EdgeSet: pbs[0].EdgeSet, Chunk: pbs[0].Chunk})
	nw := pbs[0].Workers()
	losses := make([][]float64, nw)
	counts := make([][]int, nw)
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for w := range nw {
		losses[w], counts[w] = make([]float64, len(pbs)), make([]int, len(pbs))
		wg.Go(func() {
			mw := t.workers[w]
			var b model.Batch
			shares := make([]*plan.Share, len(pbs))
			for i, pb := range pbs {
				shares[i] = pb.Share(w)
			}
			for k := 0; ; k++ {
				i := 0
				if order != nil {
					if k == len(order[w]) {
						return
					}
					i = int(order[w][k])
				}
				pb := pbs[i]
				bt, ok := shares[i].Next()
				if !ok {
					return
				}
				if stopped.Load() || ctx.Err() != nil {
					stopped.Store(true)
					return
				}
				L, R, lt, rt := t.batchTables(pb, bt.Rows, &b)
				rng := mix.Rand(t.cfg.Seed, tagNegatives, uint64(pb.Epoch), uint64(pb.EdgeSet), uint64(pb.Chunk),
					uint64(pb.Bucket.Lhs), uint64(pb.Bucket.Rhs), uint64(w), uint64(bt.Index))
				var st model.Stats
				if pools != nil {
					st = mw.StepPools(b, L, R, pools[lt], pools[rt], rng)
				} else {
					st = mw.Step(b, L, R, rng)
				}
				losses[w][i] += st.Loss
				counts[w][i] += st.Count
				if t.opts.Edges != nil {
					t.opts.Edges(len(bt.Rows))
				}
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	loss, n := make([]float64, len(pbs)), make([]int, len(pbs))
	for w := range losses {
		for i := range pbs {
			loss[i] += losses[w][i]
			n[i] += counts[w][i]
		}
	}
	for _, pb := range pbs {
		for _, k := range t.changes(pb.Bucket) {
			t.dirty[k] = true
		}
	}
	return loss, n, nil
}

// batchTables fills b with the columns of rows and returns the tables of
// its lhs and rhs entities, and their entity types.
func (t *Trainer) batchTables(pb *plan.Prepared, rows []uint32, b *model.Batch) (L, R *model.Table, lt, rt int) {
	e := pb.Data()
	b.Lhs, b.Rhs, b.Rel, b.Weight = b.Lhs[:0], b.Rhs[:0], b.Rel[:0], b.Weight[:0]
	for _, x := range rows {
		b.Lhs = append(b.Lhs, e.Lhs[x])
		b.Rhs = append(b.Rhs, e.Rhs[x])
		b.Rel = append(b.Rel, e.Rel[x])
		if e.Weight != nil {
			b.Weight = append(b.Weight, e.Weight[x])
		}
	}
	if e.Weight == nil {
		b.Weight = nil
	}
	rc := t.cfg.Relations[0]
	if !t.cfg.DynamicRelations {
		rc = t.cfg.Relations[b.Rel[0]]
	}
	lt, rt = t.typeIdx[rc.Lhs], t.typeIdx[rc.Rhs]
	L = t.tables[tableKey{lt, partOf(t.cfg, rc.Lhs, pb.Bucket.Lhs)}]
	R = t.tables[tableKey{rt, partOf(t.cfg, rc.Rhs, pb.Bucket.Rhs)}]
	return L, R, lt, rt
}

// negativePools returns, with negatives = "buffer", each entity type's
// pool of uniform negatives: its resident partitions in partition order
// (the buffer's content, buffer.go); nil with negatives = "bucket".
func (t *Trainer) negativePools() map[int]*model.Pool {
	if !t.cfg.BufferNegatives() {
		return nil
	}
	pools := map[int]*model.Pool{}
	keys := t.res.keys()
	for _, k := range keys {
		var tabs []*model.Table
		if p := pools[k.typ]; p != nil {
			tabs = p.Tabs
		}
		pools[k.typ] = model.NewPool(append(tabs, t.tables[k]))
	}
	if t.cfg.DegreeNegatives() {
		samplers := t.degreeSamplers(keys)
		byType := map[int][]*alias.Table{}
		for _, k := range keys {
			byType[k.typ] = append(byType[k.typ], samplers[k])
		}
		for typ, p := range pools {
			pools[typ] = p.WithDegrees(byType[typ])
		}
	}
	return pools
}
