package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// trainDist holds train's distributed-mode flags (docs/distributed.md).
type trainDist struct {
	etcd        *string
	rank, world *int
	runName     *string
	leaseTTL    *time.Duration
	dialTimeout *time.Duration
}

func trainDistFlags(fs *flag.FlagSet) *trainDist {
	return &trainDist{
		etcd:        fs.String("etcd", "", "distributed mode: etcd endpoints host:port[,...]; train the buckets this rank is given"),
		rank:        fs.Int("rank", 0, "with --etcd: this process's rank, 0 <= rank < world"),
		world:       fs.Int("world", 0, "with --etcd: the number of ranks of the run"),
		runName:     fs.String("run", "", "with --etcd: the run's name (default: train-HASH of the config's fingerprint, the data and num_epochs)"),
		leaseTTL:    fs.Duration("lease-ttl", 10*time.Second, "with --etcd: a rank silent this long loses its bucket, which is trained again by another"),
		dialTimeout: fs.Duration("etcd-timeout", 20*time.Second, "with --etcd: give up joining when etcd does not answer within this"),
	}
}

func (d *trainDist) on() bool { return *d.etcd != "" }

func (d *trainDist) check() error {
	switch {
	case *d.etcd == "" && (*d.world != 0 || *d.rank != 0 || *d.runName != ""):
		return usagef("--rank, --world and --run go with --etcd")
	case *d.etcd != "" && (*d.world < 1 || *d.rank < 0 || *d.rank >= *d.world):
		return usagef("--rank %d --world %d: want --world >= 1 and 0 <= rank < world", *d.rank, *d.world)
	case *d.etcd != "" && *d.leaseTTL < time.Second:
		return usagef("--lease-ttl %v: at least 1s", *d.leaseTTL)
	}
	return nil
}

// run trains as one rank of a distributed run.
func (d *trainDist) run(env *Env, cfg *config.Config, store *edgestore.Store, quiet bool) error {
	run := *d.runName
	if run == "" {
		fp, _ := json.Marshal(struct {
			F      map[string]any
			Epochs int
		}{train.Fingerprint(cfg, store.Fingerprint()), cfg.NumEpochs})
		h := sha256.Sum256(fp)
		run = "train-" + hex.EncodeToString(h[:8])
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*d.etcd, ","), DialTimeout: *d.dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("--etcd %s: %w", *d.etcd, err)
	}
	defer c.Close()
	if err := os.MkdirAll(cfg.CheckpointPath, 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(cfg.CheckpointPath, "training_log.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	prog := newProgress(env, fmt.Sprintf("train rank %d/%d", *d.rank, *d.world), "edges", 0, quiet)
	o := train.DistOptions{Client: c, Run: run, Rank: *d.rank, World: *d.world, LeaseTTL: *d.leaseTTL, Log: logf,
		JoinTimeout: *d.dialTimeout,
		Edges:       func(n int) { prog.Add(int64(n)) }}
	var done int
	o.Bucket = func(ev train.DistEvent) {
		done++
		trainBucketLine(env, prog, cfg, ev.Event, quiet)
	}
	fmt.Fprintf(env.Stderr, "train: rank %d of %d in run %s on %s\n", *d.rank, *d.world, run, *d.etcd)
	man, err := train.RunDistributed(env.Ctx, cfg, store, o)
	prog.Done()
	if err != nil {
		if env.Ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "stopped; this rank's bucket went back to the pool: run the same command to rejoin run %s\n", run)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("--etcd %s: %w", *d.etcd, err)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "rank %d trained %d buckets; the run trained %d buckets, %d edges; checkpoint in %s\n",
		*d.rank, done, man.Buckets, man.Edges, cfg.CheckpointPath)
	for _, h := range man.History {
		line := fmt.Sprintf("epoch %d: loss %.4f", h.Epoch+1, h.Loss)
		if h.Holdout > 0 {
			line += fmt.Sprintf(", holdout MRR %.4f -> %.4f (%d edges)", h.MRRBefore, h.MRRAfter, h.Holdout)
		}
		fmt.Fprintln(env.Stdout, line)
	}
	fmt.Fprintf(env.Stdout, "partitions: %d loads (%s), %d saves (%s)\n", man.IO.Loads, humanBytes(man.IO.LoadBytes), man.IO.Saves, humanBytes(man.IO.SaveBytes))
	return nil
}
