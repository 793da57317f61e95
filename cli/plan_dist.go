package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/sched"
)

// planDist holds plan's distributed-mode flags (SPEC B6, docs/distributed.md):
// one rank of a run on etcd, or a simulation of W trainers.
type planDist struct {
	etcd     *etcdFlags
	trainers *int
	simulate *bool
	policy   *string
}

func distFlags(fs *flag.FlagSet) *planDist {
	return &planDist{
		etcd:     newEtcdFlags(fs, "print", "plan-HASH of the plan's fingerprint and num_epochs"),
		trainers: fs.Int("trainers", 0, "with --simulate: the number of simulated trainers"),
		simulate: fs.Bool("simulate", false, "simulate --trainers W trainers (bucket time = its edges) and print the schedule and idle time"),
		policy:   fs.String("policy", "batchprep", "with --simulate: batchprep (this scheduler) or pbg (PBG's lock server)"),
	}
}

func (d *planDist) on() bool { return d.etcd.on() || *d.simulate }

func (d *planDist) check(format string, resumeFlags bool) error {
	if err := d.etcd.check(); err != nil {
		return err
	}
	switch {
	case d.etcd.on() && *d.simulate:
		return usagef("--etcd and --simulate do not go together")
	case d.etcd.on() && format != "jsonl":
		return usagef("--etcd prints --format jsonl only")
	case *d.simulate && *d.trainers < 0:
		return usagef("--trainers %d: must be >= 1 (or absent: --simulate alone predicts a training run's memory and disk)", *d.trainers)
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
	e := d.etcd
	run := e.runID("plan", struct {
		F      plan.Fingerprint
		Epochs int
	}{p.Fingerprint(), p.Options().NumEpochs})
	c, err := e.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	o := coord.PlanOptions(p)
	o.Run, o.Rank, o.World, o.LeaseTTL = run, *e.rank, *e.world, *e.leaseTTL
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	err = e.sessions(env, c, fmt.Sprintf("plan rank %d", *e.rank), func(ctx context.Context) error {
		jctx, cancel := context.WithTimeout(ctx, *e.dialTimeout)
		tr, err := coord.Join(jctx, c, o)
		cancel()
		if err != nil {
			return e.wrap(err)
		}
		err = walkDistributed(ctx, tr, p, out)
		// Signing off at the end gets time; after a failure (etcd gone,
		// perhaps) the lease expires anyway.
		wait := *e.dialTimeout
		if err != nil {
			wait = 2 * time.Second
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if cerr := tr.Close(cctx); err == nil && cerr != nil {
			err = e.wrap(cerr)
		}
		return err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		err = e.unreachable(err)
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
