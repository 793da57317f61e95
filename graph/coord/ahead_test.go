package coord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// joinTest joins run as rank of world on srv with o's grid and passes.
func joinTest(t *testing.T, srv *Server, o Options) *Trainer {
	t.Helper()
	c, err := newClient(srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tr, err := Join(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// drain claims and commits until the run ends and returns the buckets in
// claim order, with how many claims were made ahead.
func drain(t *testing.T, tr *Trainer) (order []string, ahead int) {
	t.Helper()
	ctx := context.Background()
	for {
		cl, err := tr.Next(ctx)
		if errors.Is(err, ErrDone) {
			return order, ahead
		}
		if err != nil {
			t.Fatal(err)
		}
		if cl.Ahead {
			ahead++
		}
		order = append(order, fmt.Sprintf("%d:%d_%d", cl.Pass, cl.Bucket.Lhs, cl.Bucket.Rhs))
		if err := tr.Commit(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClaimAheadKeepsTheOrder: a lone trainer's schedule is the same with
// and without claiming ahead, and with it every claim but the first of
// each pass is made in the previous commit.
func TestClaimAheadKeepsTheOrder(t *testing.T) {
	srv := startServer(t)
	for _, grid := range [][2]int{{1, 1}, {1, 3}, {3, 3}, {4, 2}} {
		o := Options{World: 1, L: grid[0], R: grid[1], Passes: 3}
		o.Run = fmt.Sprintf("ahead-%dx%d", grid[0], grid[1])
		with, ahead := drain(t, joinTest(t, srv, o))
		o.Run, o.NoClaimAhead = o.Run+"-off", true
		without, none := drain(t, joinTest(t, srv, o))
		if !slices.Equal(with, without) {
			t.Fatalf("%dx%d: order with claims ahead\n%v\nwithout\n%v", grid[0], grid[1], with, without)
		}
		if want := o.Passes * (o.L*o.R - 1); ahead != want || none != 0 {
			t.Fatalf("%dx%d: %d claims ahead (want %d), %d with NoClaimAhead", grid[0], grid[1], ahead, want, none)
		}
	}
}

// TestClaimAheadLocks: a claim made ahead keeps the lock it shares with
// the finished bucket, takes the other and releases the finished bucket's
// other lock, all under the trainer's lease; Close gives it back at once.
func TestClaimAheadLocks(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	// A 2x2 grid in the order (0,0) (1,1) (0,1) (1,0): after (0,0) the
	// policy prefers (0,1), which shares partition 0.
	order := []graph.Bucket{{Lhs: 0, Rhs: 0}, {Lhs: 1, Rhs: 1}, {Lhs: 0, Rhs: 1}, {Lhs: 1, Rhs: 0}}
	o := Options{Run: "ahead-locks", World: 2, L: 2, R: 2, Passes: 1, LeaseTTL: time.Second, NoTreeInit: true,
		Order: func(int) []graph.Bucket { return order }}
	a := joinTest(t, srv, o)
	first, err := a.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Bucket != order[0] || first.Ahead {
		t.Fatalf("first claim %+v", first)
	}
	if err := a.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	next, err := a.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !next.Ahead || next.Bucket != (graph.Bucket{Lhs: 0, Rhs: 1}) || next.Number <= first.Number {
		t.Fatalf("claim after committing %+v: %+v, want (0,1) claimed ahead", first, next)
	}
	get := func(key string) *clientv3.GetResponse {
		resp, err := a.c.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, p := range []int{0, 1} {
		kvs := get(a.k.lock(p)).Kvs
		if len(kvs) != 1 || clientv3.LeaseID(kvs[0].Lease) != a.lease.id {
			t.Fatalf("lock/%d after the claim ahead: %v, want held under lease %x", p, kvs, a.lease.id)
		}
	}
	if kvs := get(a.k.held(0, next.Bucket)).Kvs; len(kvs) != 1 || kvs[0].CreateRevision != next.Number {
		t.Fatalf("held key of the claim ahead: %v", kvs)
	}
	if kvs := get(a.k.done(0, first.Bucket)).Kvs; len(kvs) != 1 || string(kvs[0].Value) != fmt.Sprint(first.Number) {
		t.Fatalf("done key of the committed bucket: %v", kvs)
	}
	// When a leaves without committing, (0,1) is back in the pool at once:
	// its keys go with a's revoked lease, not after the TTL.
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{a.k.lock(0), a.k.lock(1), a.k.held(0, next.Bucket)} {
		if n := len(get(key).Kvs); n != 0 {
			t.Fatalf("%s still there after Close", key)
		}
	}
	b := joinTest(t, srv, Options{Run: o.Run, Rank: 1, World: 2, L: 2, R: 2, Passes: 1, LeaseTTL: time.Second,
		NoTreeInit: true, Order: o.Order})
	got := map[graph.Bucket]bool{}
	for range 3 {
		cl, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[cl.Bucket] = true
		if err := b.Commit(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 || !got[next.Bucket] {
		t.Fatalf("rank 1 trained %v, want the three buckets left", got)
	}
	if _, err := b.Next(ctx); !errors.Is(err, ErrDone) {
		t.Fatalf("rank 1: %v, want ErrDone", err)
	}
}

// TestClaimAheadLost: a claim made ahead is fenced like any other: when the
// trainer's lease expires before it commits, the bucket goes to another
// trainer and the late commit returns ErrLost.
func TestClaimAheadLost(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	o := Options{Run: "ahead-lost", World: 2, L: 1, R: 2, Passes: 1, LeaseTTL: time.Second}
	a := joinTest(t, srv, o)
	first, err := a.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	next, err := a.Next(ctx)
	if err != nil || !next.Ahead {
		t.Fatalf("second claim %+v, %v: want one made ahead", next, err)
	}
	a.lease.halt()
	o.Rank = 1
	b := joinTest(t, srv, o)
	cb, err := b.Next(ctx) // waits until a's lease expires
	if err != nil {
		t.Fatal(err)
	}
	if cb.Bucket != next.Bucket {
		t.Fatalf("rank 1 got %+v, want a's lost %+v", cb, next)
	}
	if err := a.Commit(ctx, next); !errors.Is(err, ErrLost) {
		t.Fatalf("commit of the lost claim ahead: %v, want ErrLost", err)
	}
	if err := b.Commit(ctx, cb); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, ErrDone) {
		t.Fatalf("rank 1: %v, want ErrDone", err)
	}
}

// TestFirstBucketIsTheOrders: whichever rank claims first, the run's first
// bucket is the first pass's order's first (sched invariant 4), not the
// bucket at the rank's own place in the order. Rank 1 of 2 claims alone.
func TestFirstBucketIsTheOrders(t *testing.T) {
	srv := startServer(t)
	order := []graph.Bucket{{Lhs: 0, Rhs: 0}, {Lhs: 0, Rhs: 1}, {Lhs: 1, Rhs: 0}, {Lhs: 1, Rhs: 1},
		{Lhs: 0, Rhs: 2}, {Lhs: 2, Rhs: 0}, {Lhs: 1, Rhs: 2}, {Lhs: 2, Rhs: 1}, {Lhs: 2, Rhs: 2}}
	o := Options{Run: "first-bucket", World: 2, Rank: 1, L: 3, R: 3, Passes: 1,
		Order: func(int) []graph.Bucket { return order }}
	tr := joinTest(t, srv, o)
	defer tr.Close(context.Background())
	cl, err := tr.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cl.Bucket != order[0] {
		t.Fatalf("rank 1 of 2 claimed (%d,%d) first, want the order's first (0,0)", cl.Bucket.Lhs, cl.Bucket.Rhs)
	}
}
