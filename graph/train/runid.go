package train

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/internal/atomicfile"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RunIDName is the file that ties a checkpoint directory to the
// distributed run training in it: the run's name and a random id, both
// also in the run's etcd state (data/run). A rank refuses etcd state its
// directory does not hold the id of: the directory was deleted or
// replaced, or checkpoint_path differs between ranks. Its partition files
// would be missing, and a finished run would be reported over nothing.
const RunIDName = "distributed_run.json"

// dirRun is the content of RunIDName.
type dirRun struct {
	Run         string         `json:"run"`
	ID          string         `json:"id"`
	Fingerprint map[string]any `json:"fingerprint"`
}

// readDirRun reads dir's RunIDName; nil when there is none.
func readDirRun(dir string) (*dirRun, error) {
	path := filepath.Join(dir, RunIDName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r dirRun
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		return nil, fmt.Errorf("%w: %s: not a run id file (delete it to start a new run)", ErrCheckpoint, path)
	}
	return &r, nil
}

func writeDirRun(dir string, r *dirRun) error {
	b, _ := json.MarshalIndent(r, "", " ")
	path := filepath.Join(dir, RunIDName)
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("train: writing %s: %w", path, err)
	}
	return nil
}

func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// initRun reads the run's first pass and checks the fingerprint and the
// directory's run id, creating the run's state when this rank is the
// first: from the manifest in the checkpoint directory when it holds a
// finished run (or one stopped at a pass boundary) of the same config,
// else empty. It runs under the directory lock, so that the rank creating
// the run writes the directory's id and the etcd state before another
// rank of the directory looks at either.
func (k distKeys) initRun(ctx context.Context, c *clientv3.Client, run, endpoints, dir string, fp map[string]any, man *Manifest, passOf func(Position) int) (runInfo, int64, error) {
	l, err := lockDir(dir)
	if err != nil {
		return runInfo{}, 0, err
	}
	defer l.unlock()
	mine := "" // the id this rank wrote into the directory
	for {
		resp, err := c.Get(ctx, k.run())
		if err != nil {
			return runInfo{}, 0, fmt.Errorf("train: joining run %q: %w", run, err)
		}
		if len(resp.Kvs) == 1 {
			var ri runInfo
			if err := json.Unmarshal(resp.Kvs[0].Value, &ri); err != nil {
				return runInfo{}, 0, fmt.Errorf("train: etcd key %s: %v", k.run(), err)
			}
			if diff := DiffFingerprints(ri.Fingerprint, fp); len(diff) > 0 {
				return runInfo{}, 0, fmt.Errorf("%w: run %q was started with a different config:\n  %s", ErrCheckpoint, run, strings.Join(diff, "\n  "))
			}
			if err := k.checkDirRun(dir, run, endpoints, ri, mine); err != nil {
				return runInfo{}, 0, err
			}
			return ri, resp.Kvs[0].CreateRevision, nil
		}
		if err := refuseOtherRun(ctx, c, dir, run, fp); err != nil {
			return runInfo{}, 0, err
		}
		ri := runInfo{Fingerprint: fp, ID: newRunID(), Dir: dir}
		var st sharedState
		var ops []clientv3.Op
		if man != nil {
			if diff := DiffFingerprints(man.Fingerprint, fp); len(diff) > 0 {
				return runInfo{}, 0, fmt.Errorf("%w: the checkpoint was made with a different config:\n  %s", ErrCheckpoint, strings.Join(diff, "\n  "))
			}
			switch {
			case man.Distributed != nil && !man.Done:
				return runInfo{}, 0, fmt.Errorf("%w: the checkpoint belongs to distributed run %q, not finished, and etcd has no state for run %q (a new etcd, or another --run?)",
					ErrCheckpoint, man.Distributed.Run, run)
			case !man.Done && man.Next.Index != 0:
				return runInfo{}, 0, fmt.Errorf("%w: the single-process checkpoint stopped inside a pass (epoch %d, bucket %d of its order): finish the pass with train without --etcd first",
					ErrCheckpoint, man.Next.Epoch+1, man.Next.Index+1)
			}
			ri.Start, ri.BaseBuckets = passOf(man.Next), man.Buckets
			st = sharedState{Model: man.Model, History: man.History, IO: man.IO, Buckets: man.Buckets, Edges: man.Edges}
			for _, r := range man.Tables {
				v, _ := json.Marshal(r)
				ops = append(ops, clientv3.OpPut(k.partRef(r), string(v)))
			}
		}
		// The directory's id first: a rank that finds the etcd state
		// finds the id too (it looks under the same lock, or later).
		if err := writeDirRun(dir, &dirRun{Run: run, ID: ri.ID, Fingerprint: fp}); err != nil {
			return runInfo{}, 0, err
		}
		mine = ri.ID
		rv, _ := json.Marshal(ri)
		sv, _ := json.Marshal(st)
		ops = append(ops, clientv3.OpPut(k.run(), string(rv)), clientv3.OpPut(k.state(), string(sv)))
		tx, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(k.run()), "=", 0)).Then(ops...).Commit()
		if err != nil {
			return runInfo{}, 0, fmt.Errorf("train: starting run %q: %w", run, err)
		}
		if tx.Succeeded {
			return ri, tx.Header.Revision, nil
		}
		// Another rank created it first: read it.
	}
}

// checkDirRun refuses etcd state of run (ri) that dir does not belong
// to. mine is the id this rank wrote there while losing the race to
// create the run: it is replaced by the winner's.
func (k distKeys) checkDirRun(dir, run, endpoints string, ri runInfo, mine string) error {
	if ri.ID == "" {
		return nil // a run started before run ids
	}
	dr, err := readDirRun(dir)
	if err != nil {
		return err
	}
	if dr != nil && dr.ID == mine && mine != "" {
		return writeDirRun(dir, &dirRun{Run: run, ID: ri.ID, Fingerprint: ri.Fingerprint})
	}
	if dr != nil && dr.Run == run && dr.ID == ri.ID {
		return nil
	}
	where := fmt.Sprintf("it was started with checkpoint_path %s", ri.Dir)
	if ri.Dir == dir {
		where = "it was started in this directory, which has been deleted or replaced since"
	}
	what := fmt.Sprintf("holds no %s", RunIDName)
	if dr != nil {
		what = fmt.Sprintf("belongs to run %q (id %s)", dr.Run, dr.ID)
	}
	if endpoints == "" {
		endpoints = "ENDPOINTS"
	}
	return fmt.Errorf("%w: etcd holds run %q (id %s), but checkpoint_path %s %s: %s. Every rank of a run needs the directory the run was started in; "+
		"to start the run over instead, delete its state: batchprep coordinator runs --etcd %s --delete %s",
		ErrCheckpoint, run, ri.ID, dir, what, where, endpoints, run)
}

// refuseOtherRun refuses to start run in dir while dir belongs to another
// run still in etcd: two runs of different names in one directory are
// ranks given different configs (the default run name hashes the config),
// or a mistaken --run.
func refuseOtherRun(ctx context.Context, c *clientv3.Client, dir, run string, fp map[string]any) error {
	dr, err := readDirRun(dir)
	if err != nil || dr == nil || dr.Run == run {
		return err
	}
	prefix, err := coord.DataPrefix(dr.Run)
	if err != nil {
		return nil // not a name batchprep writes; nothing in etcd under it
	}
	resp, err := c.Get(ctx, distKeys{prefix}.run())
	if err != nil {
		return fmt.Errorf("train: joining run %q: %w", run, err)
	}
	if len(resp.Kvs) == 0 {
		return nil // that run is over
	}
	why := "other --run names"
	if diff := DiffFingerprints(dr.Fingerprint, fp); len(diff) > 0 {
		why = "a different config:\n  " + strings.Join(diff, "\n  ")
	}
	return fmt.Errorf("%w: checkpoint_path %s belongs to run %q, still in progress, and this rank would start run %q in it: the ranks were given %s",
		ErrCheckpoint, dir, dr.Run, run, why)
}

// DescribeDistRun reads a training run's keys under its data prefix
// (coord.RunSummary.Data) and describes them for people, one fact a line;
// nil when the run is not a training run (plan --etcd).
func DescribeDistRun(data map[string][]byte) []string {
	b, ok := data["run"]
	if !ok {
		return nil
	}
	var ri runInfo
	var st sharedState
	if err := json.Unmarshal(b, &ri); err != nil {
		return []string{"training run with an unreadable data/run key"}
	}
	json.Unmarshal(data["state"], &st)
	out := []string{fmt.Sprintf("training run, %d buckets committed in all (%d before this run)", st.Buckets, ri.BaseBuckets)}
	if ri.ID != "" {
		out = append(out, fmt.Sprintf("checkpoint_path %s (run id %s, in its %s)", ri.Dir, ri.ID, RunIDName))
	}
	if st.Model.File != "" {
		out = append(out, "model file "+st.Model.File)
	}
	return out
}
