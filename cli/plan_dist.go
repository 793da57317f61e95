package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/sched"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// planDist holds plan's distributed-mode flags (SPEC B6, docs/distributed.md).
type planDist struct {
	etcd        *string
	rank, world *int
	runName     *string
	leaseTTL    *time.Duration
	dialTimeout *time.Duration
	trainers    *int
	simulate    *bool
	policy      *string
}

func distFlags(fs *flag.FlagSet) *planDist {
	return &planDist{
		etcd:        fs.String("etcd", "", "distributed mode: etcd endpoints host:port[,...]; print the buckets this rank is given"),
		rank:        fs.Int("rank", 0, "with --etcd: this process's rank, 0 <= rank < world"),
		world:       fs.Int("world", 0, "with --etcd: the number of ranks of the run"),
		runName:     fs.String("run", "", "with --etcd: the run's name (default: plan-HASH of the plan's fingerprint and num_epochs, the same for every rank given the same config and data)"),
		leaseTTL:    fs.Duration("lease-ttl", 10*time.Second, "with --etcd: lease of this rank's claims; a rank silent this long loses its bucket"),
		dialTimeout: fs.Duration("etcd-timeout", 20*time.Second, "with --etcd: give up joining the run when etcd does not answer within this"),
		trainers:    fs.Int("trainers", 0, "with --simulate: the number of simulated trainers"),
		simulate:    fs.Bool("simulate", false, "simulate --trainers W trainers (bucket time = its edges) and print the schedule and idle time"),
		policy:      fs.String("policy", "batchprep", "with --simulate: batchprep (this scheduler) or pbg (PBG's lock server)"),
	}
}

func (d *planDist) on() bool { return *d.etcd != "" || *d.simulate }

func (d *planDist) check(format string, resumeFlags bool) error {
	switch {
	case *d.etcd != "" && *d.simulate:
		return usagef("--etcd and --simulate do not go together")
	case *d.etcd != "" && (*d.world < 1 || *d.rank < 0 || *d.rank >= *d.world):
		return usagef("--rank %d --world %d: want --world >= 1 and 0 <= rank < world", *d.rank, *d.world)
	case *d.etcd != "" && format != "jsonl":
		return usagef("--etcd prints --format jsonl only")
	case *d.etcd != "" && *d.leaseTTL < time.Second:
		return usagef("--lease-ttl %v: at least 1s", *d.leaseTTL)
	case *d.simulate && *d.trainers < 1:
		return usagef("--simulate needs --trainers W >= 1")
	case !*d.simulate && *d.trainers != 0:
		return usagef("--trainers goes with --simulate")
	case *d.simulate && sched.Policies[*d.policy] == nil:
		return usagef("--policy %q: want batchprep or pbg", *d.policy)
	case *d.simulate && format == "summary":
		return usagef("--simulate prints --format text or jsonl")
	case d.on() && resumeFlags:
		return usagef("--state-in, --state-out and --max-batches do not apply with --etcd or --simulate")
	}
	return nil
}

func (d *planDist) run(env *Env, p *plan.Plan, r graph.Reader, format string) error {
	if *d.simulate {
		return d.runSimulate(env, p, r, format)
	}
	run := *d.runName
	if run == "" {
		fp, _ := json.Marshal(struct {
			F      plan.Fingerprint
			Epochs int
		}{p.Fingerprint(), p.Options().NumEpochs})
		h := sha256.Sum256(fp)
		run = "plan-" + hex.EncodeToString(h[:8])
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*d.etcd, ","), DialTimeout: *d.dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("--etcd %s: %w", *d.etcd, err)
	}
	defer c.Close()
	o := coord.PlanOptions(p)
	o.Run, o.Rank, o.World, o.LeaseTTL = run, *d.rank, *d.world, *d.leaseTTL
	jctx, cancel := context.WithTimeout(env.Ctx, *d.dialTimeout)
	tr, err := coord.Join(jctx, c, o)
	cancel()
	if err != nil {
		return fmt.Errorf("--etcd %s: %w", *d.etcd, err)
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	err = walkDistributed(env.Ctx, tr, p, out)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(env.Ctx), *d.dialTimeout)
	defer cancel()
	if cerr := tr.Close(cctx); err == nil && cerr != nil {
		err = fmt.Errorf("--etcd %s: %w", *d.etcd, cerr)
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	return err
}

// walkDistributed prints the buckets tr is given, each written (and
// flushed) only once its claim is committed, so a claim lost to an expired
// lease prints nothing and the union over ranks holds every bucket once. A
// rank killed between a commit and the flush loses that bucket's lines
// from its stdout (at most one bucket): the commit, not the output, is the
// record.
func walkDistributed(ctx context.Context, tr *coord.Trainer, p *plan.Plan, out *bufio.Writer) error {
	var buf bytes.Buffer
	sink := &jsonlSink{w: &buf}
	for {
		cl, err := tr.Next(ctx)
		if errors.Is(err, coord.ErrDone) {
			return nil
		}
		if err != nil {
			return err
		}
		e, s, ch := coord.PassCoords(p, cl.Pass)
		pb, err := p.PrepareBucket(ctx, e, s, ch, cl.Bucket)
		if err != nil {
			return err
		}
		buf.Reset()
		sink.claim = &[2]int64{int64(cl.Rank), cl.Number}
		rec := plan.Record{Kind: plan.BucketRecord, Epoch: e, EdgeSet: s, Chunk: ch, Bucket: cl.Bucket,
			Index: coord.Index(p, cl.Pass, cl.Bucket), Edges: pb.NumEdges(), Holdout: pb.Holdout(), Data: pb.Data()}
		if err := sink.record(&rec); err != nil {
			return err
		}
		rec.Kind, rec.Holdout = plan.BatchRecord, nil
		for w := 0; w < pb.Workers(); w++ {
			sh := pb.Share(w)
			for bt, ok := sh.Next(); ok; bt, ok = sh.Next() {
				rec.Worker, rec.Batch, rec.Relation, rec.Rows = bt.Worker, bt.Index, bt.Relation, bt.Rows
				if err := sink.record(&rec); err != nil {
					return err
				}
			}
		}
		if err := tr.Commit(ctx, cl); errors.Is(err, coord.ErrLost) {
			continue // another rank prints this bucket
		} else if err != nil {
			return err
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		if err := out.Flush(); err != nil { // a committed bucket is on stdout at once
			return fmt.Errorf("writing output: %w", err)
		}
	}
}

func (d *planDist) runSimulate(env *Env, p *plan.Plan, r graph.Reader, format string) error {
	res, err := coord.Simulate(p, r, *d.trainers, sched.Policies[*d.policy])
	if err != nil {
		return err
	}
	out := bufio.NewWriter(env.Stdout)
	if format == "jsonl" {
		for _, ev := range res.Events {
			e, s, c := coord.PassCoords(p, ev.Pass)
			fmt.Fprintf(out, `{"kind":"sim","epoch":%d,"edge_set":%d,"chunk":%d,"bucket":[%d,%d],"trainer":%d,"start":%g,"end":%g}`+"\n",
				e, s, c, ev.Bucket.Lhs, ev.Bucket.Rhs, ev.Trainer, ev.Start, ev.End)
		}
		fmt.Fprintf(out, `{"kind":"sim_summary","trainers":%d,"policy":%q,"makespan":%g,"busy":%g,"idle":%g,"idle_fraction":%.4f}`+"\n",
			*d.trainers, *d.policy, res.Makespan, res.Busy, res.Idle, res.IdleFraction())
		return out.Flush()
	}
	printSimText(out, p, res, *d.trainers, *d.policy)
	return out.Flush()
}

func printSimText(w io.Writer, p *plan.Plan, res *sched.SimResult, trainers int, policy string) {
	fmt.Fprintf(w, "simulation: %d trainers, %s policy, %s bucket order; time unit: one edge\n", trainers, policy, p.Options().BucketOrder)
	last := -1
	for _, ev := range res.Events {
		if ev.Pass != last {
			e, s, c := coord.PassCoords(p, ev.Pass)
			fmt.Fprintf(w, "epoch %d, edge set %d, chunk %d:\n", e, s, c)
			last = ev.Pass
		}
		fmt.Fprintf(w, "  trainer %d  bucket (%d,%d)  %g - %g\n", ev.Trainer, ev.Bucket.Lhs, ev.Bucket.Rhs, ev.Start, ev.End)
	}
	fmt.Fprintf(w, "makespan: %g\nbusy: %g\nidle: %g (%.1f%% of trainers x makespan)\n", res.Makespan, res.Busy, res.Idle, 100*res.IdleFraction())
	for t, x := range res.IdlePerTrainer {
		fmt.Fprintf(w, "  trainer %d idle: %g\n", t, x)
	}
}
