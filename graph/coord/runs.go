package coord

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RunSummary describes a run's keys in etcd (ListRuns), for people
// deciding whether a run is alive, finished or left over.
type RunSummary struct {
	Name  string
	World int // 0 when no trainer has joined yet
	// Done counts the done buckets of all passes; LastPass is the highest
	// pass with a done bucket (-1: none).
	Done, LastPass int
	// Held lists the ranks holding a bucket now (under a live lease).
	Held []int
	// Left lists the ranks that saw the run end and signed off.
	Left []int
	// Data holds the caller keys (DataPrefix), by name relative to it.
	Data map[string][]byte
	Keys int // all keys of the run
}

// runsPrefix is the prefix under which every run's keys live.
const runsPrefix = "/batchprep/runs/"

// ListRuns reads every run on the cluster, sorted by name.
func ListRuns(ctx context.Context, c *clientv3.Client) ([]RunSummary, error) {
	resp, err := c.Get(ctx, runsPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("coord: listing runs: %w", err)
	}
	runs := map[string]*RunSummary{}
	for _, kv := range resp.Kvs {
		name, rest, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), runsPrefix), "/")
		if !ok {
			continue
		}
		r := runs[name]
		if r == nil {
			r = &RunSummary{Name: name, LastPass: -1, Data: map[string][]byte{}}
			runs[name] = r
		}
		r.Keys++
		rank, _ := strconv.Atoi(string(kv.Value))
		switch dir, tail, _ := strings.Cut(rest, "/"); dir {
		case "world":
			r.World, _ = strconv.Atoi(string(kv.Value))
		case "done":
			r.Done++
			if p, _, _ := strings.Cut(tail, "/"); p != "" {
				if n, err := strconv.Atoi(p); err == nil && n > r.LastPass {
					r.LastPass = n
				}
			}
		case "held":
			r.Held = append(r.Held, rank)
		case "left":
			n, _ := strconv.Atoi(tail)
			r.Left = append(r.Left, n)
		case "data":
			r.Data[tail] = kv.Value
		}
	}
	out := make([]RunSummary, 0, len(runs))
	for _, r := range runs {
		sort.Ints(r.Held)
		sort.Ints(r.Left)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DeleteRun removes every key of run, and returns how many there were.
// It is for runs no trainer is in any more (RunSummary.Held empty): a
// trainer still in the run would lose its claim and go on in a run with
// no state.
func DeleteRun(ctx context.Context, c *clientv3.Client, run string) (int64, error) {
	k, err := newKeys(run)
	if err != nil {
		return 0, err
	}
	resp, err := c.Delete(ctx, k.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("coord: deleting run %q: %w", run, err)
	}
	return resp.Deleted, nil
}
