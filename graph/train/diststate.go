package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/batchprep/batchprep/graph/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DistRun identifies the distributed run that wrote a manifest: its name
// and the etcd revision at which its state was created (two runs of one
// name, one after the other, differ in it).
type DistRun struct {
	Run     string `json:"run"`
	Created int64  `json:"created"`
	ID      string `json:"id,omitempty"` // as in RunIDName
}

// refuseDistributed refuses to continue, in single-process mode, a
// checkpoint of a distributed run that has not finished: its position is
// in etcd, not in the manifest.
func refuseDistributed(man *Manifest) error {
	if man.Distributed != nil && !man.Done {
		return fmt.Errorf("%w: the checkpoint belongs to distributed run %q, not finished: continue it with train --etcd ... --run %s",
			ErrCheckpoint, man.Distributed.Run, man.Distributed.Run)
	}
	return nil
}

// Keys of a distributed training run, under coord's DataPrefix of the run:
//
//	run           runInfo: the fingerprint and the first pass (written once)
//	state         sharedState: the model file, history and counters
//	part/TYPE/P   TableRef: the committed version of a partition
//
// A commit publishes its partitions and the new state in the claim's
// commit transaction (coord invariant 7), the state compared against the
// revision the committer read, so commits of the shared state are
// serialized.
type distKeys struct{ p string }

func (k distKeys) run() string                   { return k.p + "run" }
func (k distKeys) state() string                 { return k.p + "state" }
func (k distKeys) partDir() string               { return k.p + "part/" }
func (k distKeys) part(typ string, p int) string { return fmt.Sprintf("%spart/%s/%d", k.p, typ, p) }
func (k distKeys) partRef(r TableRef) string     { return k.part(r.Type, r.Partition) }

// runInfo is written by the first rank to start the run.
type runInfo struct {
	Fingerprint map[string]any `json:"fingerprint"`
	Start       int            `json:"start"`        // first pass (a run continuing a finished checkpoint)
	BaseBuckets int64          `json:"base_buckets"` // buckets the continued checkpoint had trained
	// ID is the run's identity, also in the checkpoint directory's
	// RunIDName (runid.go); "" for a run started before it existed.
	ID string `json:"id,omitempty"`
	// Dir is the checkpoint_path of the rank that started the run.
	Dir string `json:"checkpoint_path,omitempty"`
}

// sharedState is the part of the checkpoint every commit updates.
type sharedState struct {
	Model   FileRef      `json:"model"` // empty: the initial parameters
	History []EpochStats `json:"history"`
	IO      IOStats      `json:"io"`
	Buckets int64        `json:"buckets"`
	Edges   int64        `json:"edges"`
}

// snapshot is the committed state of a run read at one revision.
type snapshot struct {
	rev      int64 // of the read
	stateRev int64 // mod revision of the state key
	state    sharedState
	parts    map[[2]string]TableRef // (type, partition) -> ref
}

func partKey(typ string, p int) [2]string { return [2]string{typ, fmt.Sprint(p)} }

// read returns the run's committed state.
func (k distKeys) read(ctx context.Context, c *clientv3.Client) (*snapshot, error) {
	resp, err := c.Txn(ctx).Then(clientv3.OpGet(k.state()), clientv3.OpGet(k.partDir(), clientv3.WithPrefix())).Commit()
	if err != nil {
		return nil, fmt.Errorf("train: reading the run's state: %w", err)
	}
	s := &snapshot{rev: resp.Header.Revision, parts: map[[2]string]TableRef{}}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		s.stateRev = kv.ModRevision
		if err := json.Unmarshal(kv.Value, &s.state); err != nil {
			return nil, fmt.Errorf("train: etcd key %s: %v", kv.Key, err)
		}
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		var r TableRef
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("train: etcd key %s: %v", kv.Key, err)
		}
		s.parts[partKey(r.Type, r.Partition)] = r
	}
	return s, nil
}

// dirLock is an exclusive lock on the checkpoint directory (flock on
// checkpoint.lock), held while a rank rewrites the manifest and removes
// superseded files, so that the manifest only moves forward and never
// names a removed file. flock works between processes of one machine and
// on NFSv4.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "checkpoint.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("train: locking %s: %w", f.Name(), err)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) unlock() { l.f.Close() } // closing releases the flock

// publish rewrites the manifest from the run's latest committed state and
// removes the given superseded files, under the directory lock. The
// manifest is written only if it is newer than the one on disk (same run);
// training.svg is rewritten when the new manifest has more finished epochs.
func (d *distRun) publish(ctx context.Context, superseded []string) error {
	l, err := lockDir(d.t.dir)
	if err != nil {
		return err
	}
	defer l.unlock()
	s, err := d.k.read(ctx, d.o.Client)
	if err != nil {
		return err
	}
	old, err := ReadManifest(d.t.dir)
	if err != nil {
		return err
	}
	ours := old != nil && old.Distributed != nil && *old.Distributed == d.id
	if !ours || old.Seq < s.rev {
		m := d.manifest(s)
		if err := writeManifest(d.t.dir, m); err != nil {
			return err
		}
		if n := finishedEpochs(m); n > 0 && (!ours || n > finishedEpochs(old)) {
			// An epoch ended since the last manifest: plot the finished
			// ones (best effort, as in single-process training; finish
			// writes the last plot and reports its errors). The manifest
			// only grows under the lock, so the plot does too.
			WritePlot(d.t.dir, m.History[:n])
		}
	}
	for _, f := range superseded {
		if err := os.Remove(filepath.Join(d.t.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// finishedEpochs is the number of epochs of m's history that have ended.
func finishedEpochs(m *Manifest) int {
	if m.Done {
		return len(m.History)
	}
	return min(len(m.History), m.Next.Epoch)
}

// manifest is the checkpoint manifest of snapshot s: single-process
// commands (eval, export, train after the run finished) read it as theirs.
func (d *distRun) manifest(s *snapshot) *Manifest {
	m := &Manifest{Version: ManifestVersion, Seq: s.rev, Fingerprint: d.t.man.Fingerprint, Model: s.state.Model,
		History: s.state.History, IO: s.state.IO, Buckets: s.state.Buckets, Edges: s.state.Edges}
	id := d.id
	m.Distributed = &id
	for _, r := range s.parts {
		m.Tables = append(m.Tables, r)
	}
	sortTables(m.Tables)
	// Passes end in sequence (coord invariant 1 and sched's), so the count
	// of buckets committed since the run's start gives the pass reached.
	n := int(s.state.Buckets - d.baseBuckets)
	per := d.perPass
	pass := d.start + n/per
	if pass >= d.passes {
		m.Done = true
		m.Next = Position{Epoch: d.t.cfg.NumEpochs}
	} else {
		e, set, c := coord.PassCoords(d.t.plan, pass)
		m.Next = Position{Epoch: e, EdgeSet: set, Chunk: c, Index: n % per}
	}
	return m
}

// finish, at the end of the run, deletes the checkpoint files the final
// manifest does not name (lost claims' files, superseded files of a rank
// killed before it removed them) and writes training.svg, under the
// directory lock (every rank does it; atomicfile does not support two
// writers of one file at once).
func (d *distRun) finish(ctx context.Context) error {
	l, err := lockDir(d.t.dir)
	if err != nil {
		return err
	}
	defer l.unlock()
	man, err := ReadManifest(d.t.dir)
	if err != nil || man == nil || !man.Done {
		return err
	}
	if len(man.History) > 0 {
		if err := WritePlot(d.t.dir, man.History); err != nil {
			return err
		}
	}
	return d.removeOwn(named(man), -1)
}

// removeOwn removes the data files (but those of keep) and temporaries
// of the claims the training log records, of rank (rank < 0: any rank's)
// or made by this process: a run of this directory wrote them. Other
// files are left alone and reported through DistOptions.Note.
func (d *distRun) removeOwn(keep map[string]bool, rank int) error {
	own := loggedVersions(d.t.dir, rank)
	for c := range d.claims {
		own[c] = true
	}
	ents, err := os.ReadDir(d.t.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		base, temp := dataFileOf(n)
		if base == "" || keep[n] || (rank >= 0 && !temp) {
			continue
		}
		if !own[fileVersion(base)] {
			if rank < 0 && d.o.Note != nil {
				d.o.Note(fmt.Sprintf("%s: not part of the checkpoint and not written by a run of this directory (its training log does not name claim %d): left alone; delete it if it is not needed",
					filepath.Join(d.t.dir, n), fileVersion(base)))
			}
			continue
		}
		if err := os.Remove(filepath.Join(d.t.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
