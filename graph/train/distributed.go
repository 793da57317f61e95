package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/mix"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DistOptions configure one rank of a distributed run (invariant 8).
type DistOptions struct {
	Client      *clientv3.Client
	Run         string // the run's name: its etcd keys and its identity
	Endpoints   string // etcd's endpoints as the user gave them, for messages
	Rank, World int
	LeaseTTL    time.Duration // coord's default when 0
	// JoinTimeout bounds starting or joining the run (etcd unreachable);
	// 0: no bound but ctx's.
	JoinTimeout time.Duration
	// Edges is called with the edges of each finished batch.
	Edges func(n int)
	// Bucket is called after each committed bucket.
	Bucket func(DistEvent)
	// Log receives one JSON line per claim and per committed or lost
	// bucket (DistEvent).
	Log io.Writer
	// Note, when set, receives remarks for people (files left alone).
	Note func(string)
}

// DistEvent is a line of a distributed run's training log: Kind "claim"
// when a bucket is given to the rank (before it is trained), "commit" when
// its training counted, "lost" when the claim was lost (the lease expired)
// and the work was discarded. Event's fields are set for commit and lost.
type DistEvent struct {
	Kind  string `json:"kind"`
	Rank  int    `json:"rank"`
	Pass  int    `json:"pass"`
	Claim int64  `json:"claim"`
	Event
}

// distRun is one rank's state.
type distRun struct {
	t           *Trainer
	o           DistOptions
	ct          *coord.Trainer
	k           distKeys
	id          DistRun
	start       int // first pass of the run
	passes      int // all passes of the plan
	perPass     int // buckets per pass
	baseBuckets int64
	ver         map[tableKey]string // file each in-memory table was loaded from ("" initialized)
	modelFile   string              // file the in-memory parameters came from ("" initial)
	base        [][]float32         // parameters and accumulators when the bucket started
	io          IOStats             // this bucket's loads and saves
	claims      map[int64]bool      // claims this process was given (their files are its own)
}

// RunDistributed trains cfg's model as rank o.Rank of o.World trainers that
// share the plan's buckets through etcd (package graph/coord), all with the
// same config and a checkpoint_path they all see. It returns when every
// bucket of every pass is committed (ErrDone of coord is not an error), or
// on ctx's cancellation, after giving back the bucket it held.
func RunDistributed(ctx context.Context, cfg *config.Config, store Store, o DistOptions) (*Manifest, error) {
	if cfg.BufferNegatives() {
		// A rank holds its claimed bucket's partitions only (PBG's rule).
		return nil, fmt.Errorf("train: negatives = %q: distributed ranks hold only their bucket's partitions; use negatives = \"bucket\"", cfg.Negatives)
	}
	if cfg.InterleaveBuckets {
		// A rank claims and commits one bucket at a time.
		return nil, fmt.Errorf("train: interleave_buckets: distributed ranks train one claimed bucket at a time; leave it unset")
	}
	t, err := newTrainer(cfg, store, Options{Edges: o.Edges})
	if err != nil {
		return nil, err
	}
	if o.Rank < 0 {
		return nil, fmt.Errorf("train: rank %d: want 0 <= rank < world", o.Rank)
	}
	if t.lock, err = lockRun(t.dir, o.Rank); err != nil {
		return nil, err
	}
	defer t.Close()
	defer t.releaseWorkers()
	prefix, err := coord.DataPrefix(o.Run)
	if err != nil {
		return nil, err
	}
	d := &distRun{t: t, o: o, k: distKeys{prefix}, ver: map[tableKey]string{}, passes: coord.Passes(t.plan), claims: map[int64]bool{}}
	// A process of this rank before this one (the rank lock says it is
	// gone) may have been killed while writing: its temporaries are
	// never renamed; remove them.
	if err := d.removeOwn(nil, o.Rank); err != nil {
		return nil, err
	}
	l, r := t.plan.Shape()
	d.perPass = l * r
	man, err := ReadManifest(t.dir)
	if err != nil {
		return nil, err
	}
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if o.JoinTimeout > 0 {
		jctx, cancel = context.WithTimeout(ctx, o.JoinTimeout)
	}
	defer cancel()
	ri, created, err := d.k.initRun(jctx, o.Client, o.Run, o.Endpoints, t.dir, t.man.Fingerprint, man, d.passOf)
	if err != nil {
		return nil, err
	}
	d.start, d.baseBuckets, d.id = ri.Start, ri.BaseBuckets, DistRun{Run: o.Run, Created: created, ID: ri.ID}
	co := coord.PlanOptions(t.plan)
	co.Run, co.Rank, co.World, co.LeaseTTL = o.Run, o.Rank, o.World, o.LeaseTTL
	co.Passes = max(d.passes-d.start, 0)
	co.NoTreeInit = d.start > 0
	order := co.Order
	co.Order = func(k int) []graph.Bucket { return order(d.start + k) }
	if d.ct, err = coord.Join(jctx, o.Client, co); err != nil {
		return nil, err
	}
	cancel()
	err = d.loop(ctx)
	// Signing off and publishing the end get time; after a failure (etcd
	// gone, perhaps), giving back the lease is only a courtesy: it expires.
	wait := 20 * time.Second
	if err != nil {
		wait = cleanupWait
	}
	if errors.As(context.Cause(ctx), new(*coord.UnreachableError)) {
		wait = 0 // etcd is gone for good: nothing to give back to, and the lease expires
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	if err == nil {
		// Every pass is done: the manifest is final; remove what it does
		// not name, then sign off (the last rank removes the run's keys).
		if err = d.publish(cctx, nil); err == nil {
			err = d.finish(cctx)
		}
	}
	if cerr := d.ct.Close(cctx); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return finalManifest(t.dir)
}

// cleanupWait bounds giving back a bucket or the lease after a failure:
// etcd may be the failure, and the lease expires anyway.
const cleanupWait = 2 * time.Second

// passOf is the pass index of position p's (epoch, edge set, chunk).
func (d *distRun) passOf(p Position) int {
	c, s := d.t.plan.NumChunks(), d.t.plan.NumEdgeSets()
	return (p.Epoch*s+p.EdgeSet)*c + p.Chunk
}

// loop claims, trains and commits buckets until every pass is done.
func (d *distRun) loop(ctx context.Context) error {
	for {
		cl, err := d.ct.Next(ctx)
		if errors.Is(err, coord.ErrDone) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := d.bucket(ctx, cl); err != nil {
			if ctx.Err() == nil {
				actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
				d.ct.Abandon(actx, cl)
				cancel()
			}
			return err
		}
	}
}

// position returns claim cl's pass in the run and its bucket's position.
func (d *distRun) position(cl *coord.Claim) (int, Position) {
	pass := d.start + cl.Pass
	e, set, c := coord.PassCoords(d.t.plan, pass)
	return pass, Position{Epoch: e, EdgeSet: set, Chunk: c, Index: coord.Index(d.t.plan, pass, cl.Bucket)}
}

// logClaim logs claim cl as granted.
func (d *distRun) logClaim(cl *coord.Claim) {
	d.claims[cl.Number] = true
	pass, pos := d.position(cl)
	d.logLine(claimLine{Kind: "claim", Rank: d.o.Rank, Pass: pass, Claim: cl.Number, Position: pos, Bucket: cl.Bucket})
}

// bucket trains claim cl's bucket from the committed versions of its
// partitions and of the shared parameters, and commits it.
func (d *distRun) bucket(ctx context.Context, cl *coord.Claim) error {
	t := d.t
	start := time.Now()
	pass, pos := d.position(cl)
	if !cl.Ahead { // a claim made ahead was logged when the commit granted it
		d.logClaim(cl)
	}
	d.io = IOStats{}
	s, err := d.k.read(ctx, d.o.Client)
	if err != nil {
		return err
	}
	if err := d.swapIn(cl.Bucket, s); err != nil {
		return err
	}
	d.base = d.base[:0] // load, not merge: nothing uncommitted
	if err := d.syncModel(ctx, s); err != nil {
		return err
	}
	for _, v := range modelVectors(t.m) {
		d.base = append(d.base, slices.Clone(v.P), slices.Clone(v.Acc))
	}
	pb, err := t.plan.PrepareBucket(ctx, pos.Epoch, pos.EdgeSet, pos.Chunk, cl.Bucket)
	if err != nil {
		return err
	}
	got, err := t.trainPrepared(ctx, []Position{pos}, []*plan.Prepared{pb})
	if err != nil {
		return err
	}
	ev, loss := got[0].ev, got[0].loss
	// The bucket's partitions, each in a file named by the claim (no
	// other trainer writes that name: claims are unique).
	var refs []TableRef
	var superseded []string
	var oldModel string
	var done int64
	if d.ct.Lost() {
		// The lease is gone (etcd lost it, or this rank was paused past
		// it): the claim is lost; write and commit nothing.
		err = coord.ErrLost
	} else {
		for _, k := range t.needed(cl.Bucket) {
			tab := t.tables[k]
			ref, err := writeTableRef(t.dir, fmt.Sprintf("emb_%d_%d.v%d.bin", k.typ, k.part, cl.Number), tab)
			if err != nil {
				return err
			}
			d.io.Saves++
			d.io.SaveBytes += ref.Bytes
			refs = append(refs, TableRef{Type: t.types[k.typ], Partition: k.part, Rows: tab.Rows, FileRef: ref})
			if old, ok := s.parts[partKey(t.types[k.typ], k.part)]; ok {
				superseded = append(superseded, old.File)
			}
		}
		oldModel, done, err = d.commit(ctx, cl, s, pos, ev, loss, refs)
	}
	if errors.Is(err, coord.ErrLost) {
		// The lease expired: the bucket is back in the pool and another
		// trainer trains it from the committed versions. Nothing of this
		// work counts; forget it.
		d.forget()
		for _, r := range refs {
			os.Remove(filepath.Join(t.dir, r.File))
		}
		os.Remove(filepath.Join(t.dir, d.modelName(cl)))
		ev.Seconds = time.Since(start).Seconds()
		d.log(DistEvent{Kind: "lost", Rank: d.o.Rank, Pass: pass, Claim: cl.Number, Event: ev})
		return nil
	}
	if err != nil {
		return err
	}
	clear(t.dirty)
	for i, k := range t.needed(cl.Bucket) {
		d.ver[k] = refs[i].File
	}
	if oldModel != "" {
		superseded = append(superseded, oldModel)
	}
	if err := d.publish(ctx, superseded); err != nil {
		return err
	}
	ev.IO, ev.Seconds = d.io, time.Since(start).Seconds()
	ev.Done, ev.Total = done-d.baseBuckets, int64((d.passes-d.start)*d.perPass)
	de := DistEvent{Kind: "commit", Rank: d.o.Rank, Pass: pass, Claim: cl.Number, Event: ev}
	d.log(de)
	if a := d.ct.Ahead(); a != nil {
		d.logClaim(a) // granted by this commit
	}
	if d.o.Bucket != nil {
		d.o.Bucket(de)
	}
	return nil
}

func (d *distRun) modelName(cl *coord.Claim) string { return fmt.Sprintf("model.v%d.bin", cl.Number) }

// commit publishes the bucket: its partitions' new versions, and the
// shared parameters with this bucket's change merged into the latest
// committed ones (invariant 8), in the claim's commit transaction,
// conditional on the shared state being the one merged into. When another
// trainer committed in between, it merges again. It returns the model file
// the commit superseded and the run's count of committed buckets.
func (d *distRun) commit(ctx context.Context, cl *coord.Claim, s *snapshot, pos Position, ev Event, loss float64, refs []TableRef) (string, int64, error) {
	t := d.t
	for {
		if err := d.syncModel(ctx, s); err != nil {
			return "", 0, err
		}
		// Now t.m = latest committed + this bucket's change, and d.base =
		// latest committed.
		ref, err := writeRef(t.dir, d.modelName(cl), encodeModel(t.m))
		if err != nil {
			return "", 0, err
		}
		st := s.state
		st.Model = ref
		st.History = slices.Clone(st.History)
		st.IO.Loads += d.io.Loads
		st.IO.LoadBytes += d.io.LoadBytes
		st.IO.Saves += d.io.Saves + 1
		st.IO.SaveBytes += d.io.SaveBytes + ref.Bytes
		rec := &Trainer{man: &Manifest{History: st.History, Buckets: st.Buckets, Edges: st.Edges}}
		rec.record(ev, loss)
		st.History, st.Buckets, st.Edges = rec.man.History, rec.man.Buckets, rec.man.Edges
		sv, _ := json.Marshal(st)
		ops := []clientv3.Op{clientv3.OpPut(d.k.state(), string(sv))}
		for _, r := range refs {
			v, _ := json.Marshal(r)
			ops = append(ops, clientv3.OpPut(d.k.partRef(r), string(v)))
		}
		cmp := clientv3.Compare(clientv3.ModRevision(d.k.state()), "=", s.stateRev)
		err = d.ct.CommitWith(ctx, cl, []clientv3.Cmp{cmp}, ops)
		if errors.Is(err, coord.ErrConflict) {
			if s, err = d.k.read(ctx, d.o.Client); err != nil {
				return "", 0, err
			}
			continue
		}
		if err != nil {
			return "", 0, err
		}
		d.modelFile = ref.File
		return s.state.Model.File, st.Buckets, nil
	}
}

// syncModel makes the in-memory parameters the latest committed ones (s's)
// plus what this rank changed since d.base, and d.base the latest
// committed ones. Before a bucket's training (d.base empty) it loads them.
func (d *distRun) syncModel(ctx context.Context, s *snapshot) error {
	t := d.t
	if s.state.Model.File == d.modelFile {
		return nil
	}
	for {
		fresh, err := NewModel(t.cfg, t.store.NumRelations())
		if err != nil {
			return err
		}
		if f := s.state.Model; f.File != "" {
			data, err := readRef(t.dir, f)
			if errors.Is(err, ErrCheckpoint) && isNotExist(t.dir, f.File) {
				// A later commit superseded and removed it: read again.
				if s2, err := d.k.read(ctx, d.o.Client); err != nil {
					return err
				} else {
					*s = *s2
				}
				if s.state.Model.File == d.modelFile {
					return nil
				}
				continue
			}
			if err != nil {
				return err
			}
			if err := decodeModelInto(data, fresh); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrCheckpoint, f.File, err)
			}
			d.io.Loads++
			d.io.LoadBytes += int64(len(data))
		}
		vs, fv := modelVectors(t.m), modelVectors(fresh)
		for i, v := range vs {
			if len(d.base) > 0 {
				mergeInto(v.P, fv[i].P, d.base[2*i])
				mergeInto(v.Acc, fv[i].Acc, d.base[2*i+1])
				copy(d.base[2*i], fv[i].P)
				copy(d.base[2*i+1], fv[i].Acc)
			} else {
				copy(v.P, fv[i].P)
				copy(v.Acc, fv[i].Acc)
			}
		}
		d.modelFile = s.state.Model.File
		return nil
	}
}

// mergeInto sets cur to latest + (cur - base): this rank's change applied
// to the latest committed values.
func mergeInto(cur, latest, base []float32) {
	for i := range cur {
		cur[i] = latest[i] + (cur[i] - base[i])
	}
}

func isNotExist(dir, file string) bool {
	_, err := os.Stat(filepath.Join(dir, file))
	return errors.Is(err, os.ErrNotExist)
}

// swapIn makes the in-memory tables the committed versions of bucket b's
// partitions (invariant 3 as in single-process mode): a table already in
// memory is kept when it is the committed version.
func (d *distRun) swapIn(b graph.Bucket, s *snapshot) error {
	t := d.t
	need := t.needed(b)
	for k := range t.tables {
		if !slices.Contains(need, k) {
			delete(t.tables, k)
			delete(d.ver, k)
		}
	}
	for _, k := range need {
		ref, ok := s.parts[partKey(t.types[k.typ], k.part)]
		if t.tables[k] != nil && d.ver[k] == ref.File {
			continue
		}
		rows, err := t.store.EntityCount(t.types[k.typ], k.part)
		if err != nil {
			return err
		}
		if !ok {
			rng := mix.Rand(t.cfg.Seed, tagInit, uint64(k.typ), uint64(k.part))
			t.tables[k], d.ver[k] = model.NewTable(rows, t.cfg.Dimension, t.cfg.InitScale, rng), ""
			continue
		}
		tab, err := readTableRef(t.dir, ref.FileRef)
		if err != nil {
			return err
		}
		if tab.Rows != rows || tab.Dim != t.cfg.Dimension {
			return fmt.Errorf("%w: %s: %d rows of dimension %d, want %d of %d", ErrCheckpoint, ref.File, tab.Rows, tab.Dim, rows, t.cfg.Dimension)
		}
		d.io.Loads++
		d.io.LoadBytes += ref.Bytes
		t.tables[k], d.ver[k] = tab, ref.File
	}
	return nil
}

// forget drops what a lost claim changed: the bucket's tables and the
// parameters are read again from the committed versions.
func (d *distRun) forget() {
	clear(d.t.tables)
	clear(d.ver)
	clear(d.t.dirty)
	d.modelFile = "\x00 reload" // no committed file has this name
	d.base = d.base[:0]
}

// sortTables orders table references by type, then partition.
func sortTables(ts []TableRef) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Type != ts[j].Type {
			return ts[i].Type < ts[j].Type
		}
		return ts[i].Partition < ts[j].Partition
	})
}
