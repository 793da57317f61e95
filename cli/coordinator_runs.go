package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/train"
)

const coordinatorRunsDescription = `
List the distributed runs (plan --etcd and train --etcd) whose state an
etcd holds, one line each: name, world, buckets done and the last pass
reached, ranks holding a bucket now, ranks signed off. A run whose ranks
all signed off has been removed already; one listed with no rank holding a
bucket is finished or stopped (all ranks killed), and the same commands
continue it.

--describe RUN prints one run's keys in detail (for a training run: its
checkpoint_path and run id). --delete RUN removes a run's state so that the
same commands start it over (after the checkpoint directory was deleted,
for example); it refuses while a rank holds a bucket, unless --force.

Examples:
  batchprep coordinator runs --etcd 127.0.0.1:2379
  batchprep coordinator runs --etcd 127.0.0.1:2379 --describe train-3f2a9c0d1e2b4a5c
  batchprep coordinator runs --etcd 127.0.0.1:2379 --delete train-3f2a9c0d1e2b4a5c`

func runCoordinatorRuns(env *Env, args []string) error {
	fs := newFlagSet(env, "coordinator runs", "", coordinatorRunsDescription)
	ec := newEtcdClient(fs, "etcd endpoints host:port[,...] (required)")
	describe := fs.String("describe", "", "print run `RUN` in detail")
	del := fs.String("delete", "", "delete run `RUN`'s state")
	force := fs.Bool("force", false, "with --delete: delete even while ranks hold buckets")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *ec.endpoints == "":
		return usagef("--etcd is required")
	case *describe != "" && *del != "":
		return usagef("--describe and --delete: give one")
	case *force && *del == "":
		return usagef("--force goes with --delete")
	}
	if err := ec.checkClient(); err != nil {
		return err
	}
	c, err := ec.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(env.Ctx, *ec.dialTimeout)
	defer cancel()
	runs, err := coord.ListRuns(ctx, c)
	if err != nil {
		return ec.unreachable(err)
	}
	find := func(name string) (*coord.RunSummary, error) {
		for i := range runs {
			if runs[i].Name == name {
				return &runs[i], nil
			}
		}
		return nil, fmt.Errorf("no run %q on %s (%s)", name, *ec.endpoints, runNames(runs))
	}
	switch {
	case *del != "":
		r, err := find(*del)
		if err != nil {
			return err
		}
		if len(r.Held) > 0 && !*force {
			return fmt.Errorf("run %q is training (%s holding a bucket): stop its ranks first, or add --force", r.Name, ranksText(r.Held))
		}
		n, err := coord.DeleteRun(ctx, c, r.Name)
		if err != nil {
			return ec.unreachable(err)
		}
		fmt.Fprintf(env.Stdout, "deleted run %s (%d keys)\n", r.Name, n)
	case *describe != "":
		r, err := find(*describe)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "run        %s\n", r.Name)
		fmt.Fprintf(env.Stdout, "world      %d\n", r.World)
		fmt.Fprintf(env.Stdout, "done       %d buckets, last pass %d\n", r.Done, r.LastPass+1)
		fmt.Fprintf(env.Stdout, "holding    %s\n", ranksText(r.Held))
		fmt.Fprintf(env.Stdout, "signed off %s\n", ranksText(r.Left))
		fmt.Fprintf(env.Stdout, "keys       %d\n", r.Keys)
		for _, l := range train.DescribeDistRun(r.Data) {
			fmt.Fprintf(env.Stdout, "train      %s\n", l)
		}
	default:
		if len(runs) == 0 {
			fmt.Fprintf(env.Stdout, "no runs on %s\n", *ec.endpoints)
			return nil
		}
		fmt.Fprintf(env.Stdout, "%-28s %5s %8s %5s  %-14s %s\n", "RUN", "WORLD", "DONE", "PASS", "HOLDING", "SIGNED OFF")
		for _, r := range runs {
			fmt.Fprintf(env.Stdout, "%-28s %5d %8d %5d  %-14s %s\n", r.Name, r.World, r.Done, r.LastPass+1, ranksText(r.Held), ranksText(r.Left))
		}
	}
	return nil
}

// ranksText lists ranks for people ("none", "rank 1", "ranks 0, 2").
func ranksText(rs []int) string {
	switch len(rs) {
	case 0:
		return "none"
	case 1:
		return fmt.Sprintf("rank %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s, ", ")
}

func runNames(runs []coord.RunSummary) string {
	if len(runs) == 0 {
		return "it holds none"
	}
	var s []string
	for _, r := range runs {
		s = append(s, r.Name)
	}
	return "runs: " + strings.Join(s, ", ")
}
