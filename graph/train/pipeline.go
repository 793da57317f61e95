package train

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Partition I/O behind training (docs/training.md, "Partition I/O behind
// training"). While a bucket trains, one goroutine may load the next
// bucket's first partition that the current bucket does not hold (the
// load ahead), and another writes the end of the previous bucket's
// checkpoint (the write behind): at most one partition the next bucket no
// longer needs, the model file and the manifest, then the superseded files
// are removed. The invariants that keep checkpoints as safe and as
// deterministic as when everything is written in turn:
//
//   - W1. At most one checkpoint is uncommitted at any time: checkpoint
//     number s+1 starts writing only after number s is committed (join
//     comes before the next checkpoint's files), so a kill leaves files of
//     the committed number and of the next one only, which removeStray
//     knows how to remove (invariant 12).
//   - W2. A manifest is written only after every file it names is durable
//     (the writer writes the partition and the model file, each fsynced
//     and renamed, before the manifest).
//   - W3. What is written is the state after the bucket: the partitions the
//     next bucket trains are written before it starts (they change under
//     it); the partition written behind is one the next bucket does not
//     train (it is out of the trainer's tables until committed), and the
//     model's parameters are copied into their file image before the next
//     bucket starts.
//   - W4. The written-behind partition is never read from disk before its
//     manifest is committed: a load of it for the bucket after next waits
//     for the writer and reads the file the new manifest names.
//   - W5. Loads, saves and their bytes are counted exactly as with no
//     overlap, so the manifest's counters (and PredictIO) do not depend on
//     Options.SequentialIO; the event of a bucket is emitted when its
//     checkpoint is committed (one bucket later when written behind).
//   - W6. Between commits (Config.CheckpointEvery buckets apart), a changed
//     partition that leaves memory is written as a file of the next,
//     uncommitted checkpoint and recorded in the working manifest only; a
//     later load of it reads that file (after the writer, as in W4). The
//     committed manifest names none of them, so a kill leaves the last
//     commit whole and removeStray removes them (W1). A partition that
//     stays in memory is written only at a commit.

// ioWaits is the time training waited on partition I/O: loads it needed
// (read from disk, or awaited from the load ahead) and checkpoint writes
// it could not overlap (written in turn, or a write behind still
// draining).
type ioWaits struct {
	load, write           time.Duration // the current bucket's
	totalLoad, totalWrite time.Duration // the run's
}

func (w *ioWaits) addLoad(d time.Duration)  { w.load += d; w.totalLoad += d }
func (w *ioWaits) addWrite(d time.Duration) { w.write += d; w.totalWrite += d }

// aheadLoad is a partition being loaded for the next bucket.
type aheadLoad struct {
	key  tableKey
	done chan struct{} // closed when loaded is set
	loaded
}

// pendingCheckpoint is a checkpoint whose last files are being written.
type pendingCheckpoint struct {
	man    *Manifest                 // the writer's until done is closed, then read-only
	old    *Manifest                 // the last committed one, read-only
	behind map[tableKey]*model.Table // the partition written behind (at most one)
	model  []byte                    // the model file's content
	ev     Event                     // emitted once committed
	commit bool                      // a commit; else only partitions leaving memory
	done   chan struct{}             // closed when the writer is done
	err    error                     // the commit failed (nothing committed)
	rmErr  error                     // committed, but a superseded file stayed
}

// writeBehindHook, when set (tests), runs in the writer after the
// partition written behind is durable and before the model file and the
// manifest.
var writeBehindHook func()

// prefetch starts loading the first partition next needs that the buffer
// does not hold, unless Options.SequentialIO is set. When the last checkpoint
// has a partition written behind, the load starts only once that
// checkpoint is committed (the writer has then released the partition):
// the partition in flight, written behind or loaded ahead, is one at a
// time, and a bucket holds at most its own partitions and that one
// (docs/training.md, "Memory").
func (t *Trainer) prefetch(next graph.Bucket) {
	if t.opts.SequentialIO {
		return
	}
	for _, k := range t.needed(next) {
		if t.res.has(k) {
			continue
		}
		a := &aheadLoad{key: k, done: make(chan struct{})}
		t.ahead = a
		rows, err := t.store.EntityCount(t.types[k.typ], k.part)
		if err != nil {
			a.err = err
			close(a.done)
			return
		}
		ref, ok := tableRef(t.man, t.types[k.typ], k.part)
		p, behind := t.pending, false
		if p != nil {
			_, behind = p.behind[k]
			if len(p.behind) == 0 {
				p = nil
			}
		}
		go func() {
			defer close(a.done)
			if p != nil {
				<-p.done // the partition written behind is released
			}
			if behind { // W4: the partition written behind, once committed
				if p.err != nil {
					a.err = p.err
					return
				}
				ref, ok = tableRef(p.man, t.types[k.typ], k.part)
			}
			a.loaded = t.readOrInit(k, rows, ref, ok)
		}()
		return
	}
}

// dropAhead waits for and discards (releases) a load ahead nobody took.
func (t *Trainer) dropAhead() {
	if a := t.ahead; a != nil {
		<-a.done
		a.tab.Release()
		t.ahead = nil
	}
}

// checkpoint ends a bucket's I/O (invariant 4). When commit is set it
// commits the state after the bucket: the partitions changed since the
// last commit that are still in memory, and the model, go to new files
// named with the next sequence number, each written atomically; then the
// manifest, naming them (and the files written for partitions that left
// memory since the last commit) with their SHA-256 and the position next,
// replaces the old one atomically; only then are the files no manifest
// names removed. A crash at any point leaves the old or the new
// checkpoint, whole. A failed write (a full disk) removes the files this
// checkpoint wrote, which the old manifest does not name.
//
// When nextBucket is set, its partitions are admitted to the buffer first
// (buffer.go): the changed partitions that leave it are written. When
// commit is not set (between commits, Config.CheckpointEvery), only those
// are written, as files of the next checkpoint recorded in the working
// manifest (W6); the others stay in memory, changed, until a later step
// writes them.
//
// When nextBucket is set (and Options.SequentialIO is not), one partition
// leaving the buffer is written behind while nextBucket trains, with, for a
// commit, the model file and the manifest (W1-W5): the step ends at a
// later join. ev is the bucket's event, emitted once its checkpoint is
// committed.
func (t *Trainer) checkpoint(next Position, ev Event, nextBucket *graph.Bucket, start time.Time, commit bool) (err error) {
	defer func() {
		if err != nil {
			t.removeStray()
		}
	}()
	began := time.Now()
	seq := t.last.Seq + 1
	t.man.Seq, t.man.Next = seq, next
	t.man.Done = next.Epoch >= t.cfg.NumEpochs
	overlap := nextBucket != nil && !t.opts.SequentialIO
	stays := func(tableKey) bool { return false }
	if nextBucket != nil {
		t.admitAt(next, *nextBucket)
		stays = t.res.has
	}
	behind := map[tableKey]*model.Table{}
	for _, k := range t.dirtyKeys() {
		if !commit && stays(k) {
			continue // stays in memory for the next bucket, changed
		}
		tab := t.tables[k]
		delete(t.dirty, k)
		if overlap && len(behind) == 0 && !stays(k) {
			behind[k] = tab
			delete(t.tables, k)
			continue
		}
		ref, err := writeTableRef(t.dir, tableFileName(k, seq), tab)
		if err != nil {
			return err
		}
		t.man.IO.Saves++
		t.man.IO.SaveBytes += ref.Bytes
		setTableRef(t.man, TableRef{Type: t.types[k.typ], Partition: k.part, Rows: tab.Rows, FileRef: ref})
	}
	ev.Done, ev.Total = t.man.Buckets, t.TotalBuckets()
	p := &pendingCheckpoint{man: t.man.clone(), old: t.last, behind: behind, ev: ev, commit: commit, done: make(chan struct{})}
	if commit {
		p.model = encodeModel(t.m)
		t.sinceCommit = 0
	} else {
		t.sinceCommit++
	}
	t.pending = p
	go t.writeBehind(p)
	t.io.addWrite(time.Since(began))
	if !overlap {
		return t.join(start)
	}
	p.ev.Seconds = time.Since(start).Seconds()
	p.ev.LoadWait, p.ev.WriteWait = t.io.load.Seconds(), t.io.write.Seconds()
	return nil
}

// writeBehind writes the rest of step p (W2): the partition written
// behind; for a commit, the model file and the manifest, then it removes
// what the manifest superseded.
func (t *Trainer) writeBehind(p *pendingCheckpoint) {
	defer close(p.done)
	defer p.releaseBehind()
	nm := p.man
	for k, tab := range p.behind {
		ref, err := writeTableRef(t.dir, tableFileName(k, nm.Seq), tab)
		if err != nil {
			p.err = err
			return
		}
		nm.IO.Saves++
		nm.IO.SaveBytes += ref.Bytes
		setTableRef(nm, TableRef{Type: t.types[k.typ], Partition: k.part, Rows: tab.Rows, FileRef: ref})
	}
	if writeBehindHook != nil && len(p.behind) > 0 {
		writeBehindHook()
	}
	if !p.commit {
		return
	}
	ref, err := writeRef(t.dir, fmt.Sprintf("model.v%d.bin", nm.Seq), p.model)
	if err != nil {
		p.err = err
		return
	}
	nm.Model = ref
	sort.Slice(nm.Tables, func(i, j int) bool {
		a, b := nm.Tables[i], nm.Tables[j]
		return a.Type < b.Type || a.Type == b.Type && a.Partition < b.Partition
	})
	nm.Superseded = nil
	keep := named(nm)
	for f := range named(p.old) {
		if !keep[f] {
			nm.Superseded = append(nm.Superseded, f)
		}
	}
	sort.Strings(nm.Superseded)
	if err := writeManifest(t.dir, nm); err != nil {
		p.err = err
		return
	}
	p.rmErr = removeSuperseded(t.dir, p.old, nm)
}

// join waits for the step being written, if any, and takes its files
// into the working manifest; a commit becomes the committed checkpoint,
// and the events of the buckets it holds are emitted, in order. start is
// when the current bucket began (for a step written in turn, the bucket's
// time).
func (t *Trainer) join(start time.Time) error {
	p := t.pending
	if p == nil {
		return nil
	}
	t.pending = nil
	began := time.Now()
	<-p.done
	t.io.addWrite(time.Since(began))
	if p.err != nil {
		t.man = t.last.clone()
		t.events = nil
		t.removeStray()
		return p.err
	}
	// Between the hand-off and now, only loads (IO.Loads, IO.LoadBytes)
	// changed the working manifest.
	t.man.Tables = slices.Clone(p.man.Tables)
	t.man.IO.Saves, t.man.IO.SaveBytes = p.man.IO.Saves, p.man.IO.SaveBytes
	ev := p.ev
	if ev.Seconds == 0 {
		ev.Seconds = time.Since(start).Seconds()
		ev.LoadWait, ev.WriteWait = t.io.load.Seconds(), t.io.write.Seconds()
	}
	ev.IO, ev.Checkpoint = p.man.IO, p.man.Seq
	t.events = append(t.events, ev)
	if !p.commit {
		return nil
	}
	t.man.Model = p.man.Model
	t.man.Superseded = slices.Clone(p.man.Superseded)
	t.countEpochIO(p.ev.Epoch, t.last.IO, p.man.IO)
	t.last = p.man
	events := t.events
	t.events = nil
	for _, ev := range events {
		if t.opts.Log != nil {
			line, _ := json.Marshal(ev)
			t.opts.Log.Write(append(line, '\n'))
		}
		if t.opts.Bucket != nil {
			t.opts.Bucket(ev)
		}
	}
	return p.rmErr
}

// finish ends a run's I/O: the load ahead is dropped and the checkpoint
// being written behind committed.
func (t *Trainer) finish() error {
	t.dropAhead()
	return t.join(time.Now())
}

// dirtyKeys lists the changed partitions in (type, partition) order.
func (t *Trainer) dirtyKeys() []tableKey {
	var keys []tableKey
	for k := range t.tables {
		if t.dirty[k] {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b tableKey) int {
		if a.typ != b.typ {
			return a.typ - b.typ
		}
		return a.part - b.part
	})
	return keys
}

func tableFileName(k tableKey, seq int64) string {
	return fmt.Sprintf("emb_%d_%d.v%d.bin", k.typ, k.part, seq)
}

// setTableRef replaces m's file of tr's (type, partition), or adds it.
func setTableRef(m *Manifest, tr TableRef) {
	for i := range m.Tables {
		if m.Tables[i].Type == tr.Type && m.Tables[i].Partition == tr.Partition {
			m.Tables[i] = tr
			return
		}
	}
	m.Tables = append(m.Tables, tr)
}

// clone copies m deeply enough that the copy and m can change apart.
func (m *Manifest) clone() *Manifest {
	c := *m
	c.Tables = slices.Clone(m.Tables)
	c.History = slices.Clone(m.History)
	c.Superseded = slices.Clone(m.Superseded)
	return &c
}
