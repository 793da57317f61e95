package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/plural"
)

// trainDist runs train as one rank of a run on etcd (docs/distributed.md).
type trainDist struct{ *etcdFlags }

func trainDistFlags(fs *flag.FlagSet) *trainDist {
	return &trainDist{newEtcdFlags(fs, "train", "train-HASH of the config's fingerprint, the data and num_epochs")}
}

// run trains as one rank of a distributed run.
func (d *trainDist) run(env *Env, cfg *config.Config, store *edgestore.Store, quiet bool) (err error) {
	run := d.runID("train", struct {
		F      map[string]any
		Epochs int
	}{train.Fingerprint(cfg, store.Fingerprint()), cfg.NumEpochs})
	c, err := d.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	_, statErr := os.Stat(cfg.CheckpointPath)
	newDir := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(cfg.CheckpointPath, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(cfg.CheckpointPath, train.LogName)
	_, statErr = os.Stat(logPath)
	newLog := errors.Is(statErr, os.ErrNotExist)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	defer func() {
		if err != nil {
			leaveNothing(cfg.CheckpointPath, *d.rank, newDir, newLog)
		}
	}()
	prog := newProgress(env, fmt.Sprintf("train rank %d/%d", *d.rank, *d.world), "edges", 0, quiet)
	o := train.DistOptions{Client: c, Run: run, Endpoints: *d.endpoints, Rank: *d.rank, World: *d.world, LeaseTTL: *d.leaseTTL, Log: logf,
		JoinTimeout: *d.dialTimeout, Note: func(s string) { fmt.Fprintf(env.Stderr, "train: %s\n", s) },
		Edges: func(n int) { prog.Add(int64(n)) }}
	var done int
	o.Bucket = func(ev train.DistEvent) {
		done++
		trainBucketLine(env, prog, cfg, ev.Event, quiet)
	}
	fmt.Fprintf(env.Stderr, "train: rank %d of %d in run %s on %s\n", *d.rank, *d.world, run, *d.endpoints)
	var man *train.Manifest
	err = d.sessions(env, c, fmt.Sprintf("train rank %d", *d.rank), func(ctx context.Context) (err error) {
		man, err = train.RunDistributed(ctx, cfg, store, o)
		return err
	})
	prog.Done()
	if err != nil {
		if env.Ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "stopped; this rank's bucket went back to the pool: run the same command to rejoin run %s\n", run)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return d.unreachable(err)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "rank %d trained %s; the run trained %s, %s; checkpoint in %s\n",
		*d.rank, plural.Count(done, "bucket"), plural.Count(man.Buckets, "bucket"), plural.Count(man.Edges, "edge"), cfg.CheckpointPath)
	printHistory(env.Stdout, man)
	return nil
}

// leaveNothing undoes what a rank that failed made in its checkpoint
// directory before it trained anything: the training log it created, if
// still empty, and, when it created the directory itself and nothing but
// its lock files is in it, those and the directory.
func leaveNothing(dir string, rank int, newDir, newLog bool) {
	logPath := filepath.Join(dir, train.LogName)
	if st, err := os.Stat(logPath); newLog && err == nil && st.Size() == 0 {
		os.Remove(logPath)
	}
	if !newDir {
		return
	}
	ours := map[string]bool{train.RunLockName: true, fmt.Sprintf("rank-%d.lock", rank): true, "checkpoint.lock": true}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !ours[e.Name()] {
			return // another rank or run uses it now: its lock files stay
		}
	}
	for _, e := range ents {
		os.Remove(filepath.Join(dir, e.Name()))
	}
	os.Remove(dir)
}
