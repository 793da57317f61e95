package coord

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/sched"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Options describe a run and one trainer in it.
type Options struct {
	Run         string        // names the key prefix; several runs share a cluster
	Rank, World int           // this trainer's rank; how many ranks sign off the run
	LeaseTTL    time.Duration // default 10 s; etcd rounds up to whole seconds
	L, R        int           // partitions per side
	Passes      int           // (epoch, edge set, chunk) passes of the run
	// Order returns pass k's bucket order (the preference among free
	// buckets); nil: lexicographic.
	Order func(pass int) []graph.Bucket
	// Policy picks among claimable buckets; nil: sched.Batchprep.
	Policy sched.Policy
	// NoTreeInit turns off the first-pass rule (invariant 3 of sched).
	NoTreeInit bool
	// NoClaimAhead turns off claiming the next bucket in the commit
	// transaction of the previous one (see Commit); for comparison.
	NoClaimAhead bool
}

// ErrDone is returned by Next when every pass of the run is done.
var ErrDone = errors.New("coord: run complete")

// ErrLost is returned by Commit when the claim is no longer held: the
// trainer's lease expired (it was paused or cut off) and the bucket went
// back to the pool. Its work must be discarded.
var ErrLost = errors.New("coord: claim lost (lease expired); the bucket went back to the pool")

// Claim is a bucket given to a trainer.
type Claim struct {
	Pass   int
	Bucket graph.Bucket
	// Number is the etcd revision at which the claim was granted: it
	// increases across all ranks of the run in grant order.
	Number int64
	Rank   int
	// Overhead is the time Next spent reading the state and running
	// claim transactions for this claim, not counting waits for a bucket
	// to become free; for a claim made ahead, the whole time of the commit
	// transaction that made it.
	Overhead time.Duration
	// Retries counts claim transactions that lost a race and were redone.
	Retries int
	// Ahead says the claim was made in the commit transaction of the
	// trainer's previous bucket.
	Ahead bool
}

// Trainer is one process's handle on a run. Its methods are not safe for
// concurrent use.
type Trainer struct {
	c     *clientv3.Client
	o     Options
	k     keys
	lease *lease
	pass  int
	prev  *graph.Bucket
	// cached is the pass's state as the last commit left it, read in
	// the commit's transaction.
	cached *view
	known  known
	// ahead is the claim made by the last commit, for Next to return.
	ahead *Claim
}

// Join connects a trainer to the run (creating the run if it is new),
// grants its lease and starts keeping it alive. A trainer that joins a
// running run starts with the first pass not yet done.
func Join(ctx context.Context, c *clientv3.Client, o Options) (*Trainer, error) {
	k, err := newKeys(o.Run)
	if err != nil {
		return nil, err
	}
	switch {
	case o.World < 1 || o.Rank < 0 || o.Rank >= o.World:
		return nil, fmt.Errorf("coord: --rank %d --world %d: want 0 <= rank < world", o.Rank, o.World)
	case o.L < 1 || o.R < 1 || o.Passes < 0:
		return nil, fmt.Errorf("coord: %dx%d partitions, %d passes", o.L, o.R, o.Passes)
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.Policy == nil {
		o.Policy = sched.Batchprep
	}
	w := strconv.Itoa(o.World)
	resp, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(k.world()), "=", 0)).
		Then(clientv3.OpPut(k.world(), w)).Else(clientv3.OpGet(k.world())).Commit()
	if err != nil {
		return nil, fmt.Errorf("coord: joining run %q: %w", o.Run, err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 1 && string(kvs[0].Value) != w {
			return nil, fmt.Errorf("coord: run %q has world %s, --world says %d", o.Run, kvs[0].Value, o.World)
		}
	}
	l, err := grantLease(ctx, c, o.LeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("coord: lease: %w", err)
	}
	return &Trainer{c: c, o: o, k: k, lease: l}, nil
}

// Ahead returns the claim the last commit made ahead, which the next Next
// returns, or nil. A trainer that logs its claims logs this one when its
// commit grants it: if the trainer dies before Next, it died holding it.
func (t *Trainer) Ahead() *Claim { return t.ahead }

// Valid reports whether the trainer's lease is certainly alive now, so
// that what it holds is still its own. A trainer checks it before work it
// cannot undo; Commit is the final check.
func (t *Trainer) Valid() bool { return t.lease.valid() }

// Lost reports whether a keep-alive found the trainer's lease gone: the
// claims it holds are no longer its own (their buckets went back to the
// pool), and committing them would fail. A trainer checks it before
// writing a bucket's results, so as not to write what cannot count.
func (t *Trainer) Lost() bool { return t.lease.expired() }

// Next blocks until the trainer is given a bucket, and returns it. It
// returns ErrDone when every pass is done. A trainer holds at most one
// bucket besides the one Commit may have claimed ahead, which Next returns
// at once: call Commit (or Abandon) before the next Next.
func (t *Trainer) Next(ctx context.Context) (*Claim, error) {
	if c := t.ahead; c != nil {
		t.ahead = nil
		return c, nil
	}
	var overhead time.Duration
	retries := 0
	v := t.cached
	t.cached = nil
	for t.pass < t.o.Passes {
		if t.lease.expired() {
			if err := t.renewLease(ctx); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		if v == nil || v.pass != t.pass {
			var err error
			if v, err = t.snapshot(ctx); err != nil {
				return nil, err
			}
		}
		if v.st.Complete() {
			t.pass++
			t.prev, v = nil, nil
			overhead += time.Since(start)
			continue
		}
		b, ok := t.o.Policy(v.st, t.prev, t.o.Rank, t.o.World)
		if !ok {
			overhead += time.Since(start)
			evs, err := t.wait(ctx, v.rev)
			if err != nil {
				return nil, err
			}
			if evs == nil || t.known.pass != t.pass || t.known.rev != v.rev {
				v = nil // read afresh
			} else if v, err = t.applyEvents(evs); err != nil {
				return nil, err
			}
			continue
		}
		cands := t.candidates(v, b, t.prev, nil)
		num, fresh, err := t.claim(ctx, cands, v.st.Pass().TreeInit && v.st.NumGiven() == 0)
		overhead += time.Since(start)
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			// The lease expired while this trainer was paused: the
			// keep-alive loop will notice; take a new lease now.
			if err := t.renewLease(ctx); err != nil {
				return nil, err
			}
			retries++
			v = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		if fresh != nil {
			retries++
			v = fresh
			continue
		}
		return &Claim{Pass: t.pass, Bucket: cands[num.i], Number: num.rev, Rank: t.o.Rank, Overhead: overhead, Retries: retries}, nil
	}
	return nil, ErrDone
}

// granted says which candidate a claim transaction took, at which
// revision.
type granted struct {
	i   int
	rev int64
}

// claim tries to take the first free bucket of cands in one transaction
// (nested: each candidate's comparisons in the previous one's else
// branch): its partitions unlocked, it neither held nor done, and for the
// first bucket of the first pass, no bucket given yet. When none could be
// taken it returns the pass's state read in the same transaction.
func (t *Trainer) claim(ctx context.Context, cands []graph.Bucket, first bool) (granted, *view, error) {
	cmps, ops, rest := t.claimChain(cands, first, nil, t.stateOps()).Txn()
	resp, err := t.c.Txn(ctx).If(cmps...).Then(ops...).Else(rest...).Commit()
	if err != nil {
		b := cands[0]
		return granted{}, nil, fmt.Errorf("coord: claiming pass %d bucket (%d,%d): %w", t.pass, b.Lhs, b.Rhs, err)
	}
	i, rs := whichGranted(resp.Succeeded, resp.Responses, len(cands))
	if i >= 0 {
		return granted{i, resp.Header.Revision}, nil, nil
	}
	v, err := t.parseView(rs, resp.Header.Revision)
	return granted{}, v, err
}

// claimChain is one transaction that claims the first of cands it can:
// each candidate's comparisons are in the previous one's else branch, and
// the last else branch is elseOps. own is the bucket whose partitions the
// trainer holds and gives up in the same transaction (see claimOps).
func (t *Trainer) claimChain(cands []graph.Bucket, first bool, own *graph.Bucket, elseOps []clientv3.Op) clientv3.Op {
	var top clientv3.Op
	for i := len(cands) - 1; i >= 0; i-- {
		cmps, ops := t.claimOps(cands[i], first, own)
		top = clientv3.OpTxn(cmps, ops, elseOps)
		elseOps = []clientv3.Op{top}
	}
	return top
}

// whichGranted walks the responses of a claimChain of n candidates (ok and
// rs: whether its top level succeeded, and its responses) and returns the
// index of the candidate granted, or -1 and the responses of the last else
// branch.
func whichGranted(ok bool, rs []*etcdserverpb.ResponseOp, n int) (int, []*etcdserverpb.ResponseOp) {
	for i := range n {
		if ok {
			return i, nil
		}
		if i == n-1 {
			break
		}
		in := rs[0].GetResponseTxn()
		ok, rs = in.Succeeded, in.Responses
	}
	return -1, rs
}

// claimOps are the comparisons and writes of a claim of b. own, if not
// nil, is a bucket the trainer holds and finishes in the same transaction:
// its partitions need no free lock (the caller's transaction checks that
// own's claim is still held, and so are its locks), a lock b shares with
// it is kept for b, and the others are released.
func (t *Trainer) claimOps(b graph.Bucket, first bool, own *graph.Bucket) ([]clientv3.Cmp, []clientv3.Op) {
	val := strconv.Itoa(t.o.Rank)
	lease := clientv3.WithLease(t.lease.id)
	cmps := []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(t.k.held(t.pass, b)), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(t.k.done(t.pass, b)), "=", 0),
	}
	ops := []clientv3.Op{clientv3.OpPut(t.k.held(t.pass, b), val, lease)}
	for _, p := range b.Partitions() {
		if own == nil || !own.Needs(p) {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(t.k.lock(p)), "=", 0))
		}
		ops = append(ops, clientv3.OpPut(t.k.lock(p), val, lease))
	}
	if own != nil {
		for _, p := range own.Partitions() {
			if !b.Needs(p) {
				ops = append(ops, clientv3.OpDelete(t.k.lock(p)))
			}
		}
	}
	if t.pass == 0 && !t.o.NoTreeInit {
		ops = append(ops, clientv3.OpPut(t.k.given(b), val))
		if first {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(t.k.givenAny()), "=", 0))
			ops = append(ops, clientv3.OpPut(t.k.givenAny(), val))
		}
	}
	return cmps, ops
}

// maxCandidates bounds the buckets one claim transaction tries.
const maxCandidates = 4

// candidates lists b, the policy's choice in view v, then the buckets the
// policy would choose next if b (and each one after) were taken by
// another trainer: a claim transaction tries them in this order, so that a
// lost race for b costs no second round trip. In the first pass of a run
// with the first-pass rule only b is tried: an alternative may be
// claimable only because an earlier candidate counts as given. v is
// t.buildViewAfter(v.rev, fin); prev is the bucket the trainer finished
// last.
func (t *Trainer) candidates(v *view, b graph.Bucket, prev, fin *graph.Bucket) []graph.Bucket {
	cands := []graph.Bucket{b}
	if v.st.Pass().TreeInit {
		return cands
	}
	st := t.buildViewAfter(v.rev, fin).st
	for st.MarkDone(b); len(cands) < maxCandidates; st.MarkDone(b) {
		var ok bool
		if b, ok = t.o.Policy(st, prev, t.o.Rank, t.o.World); !ok {
			break
		}
		cands = append(cands, b)
	}
	return cands
}

// wait blocks until anything under the run changes after revision rev and
// returns the changes (nil: read the state afresh).
func (t *Trainer) wait(ctx context.Context, rev int64) ([]*clientv3.Event, error) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wc := t.c.Watch(wctx, t.k.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r, ok := <-wc:
			if !ok {
				return nil, ctx.Err()
			}
			if r.Err() != nil {
				return nil, nil // compacted or cancelled: the caller reads afresh
			}
			if len(r.Events) > 0 {
				return r.Events, nil
			}
		}
	}
}

// Commit marks c's bucket done and releases its partitions, in one
// transaction that succeeds only if the claim is still held. It returns
// ErrLost otherwise; the bucket then belongs to the pool (or to another
// trainer) and the caller's work on it does not count.
func (t *Trainer) Commit(ctx context.Context, c *Claim) error {
	return t.CommitWith(ctx, c, nil, nil)
}

// Abandon gives c's bucket back to the pool without marking it done.
func (t *Trainer) Abandon(ctx context.Context, c *Claim) error {
	held := t.k.held(c.Pass, c.Bucket)
	_, err := t.c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(held), "=", c.Number)).Then(t.release(c)...).Commit()
	return err
}

// release lists the deletions that free c's bucket and partitions (a key
// may appear only once in a transaction: a diagonal bucket has one lock).
func (t *Trainer) release(c *Claim) []clientv3.Op {
	return append([]clientv3.Op{clientv3.OpDelete(t.k.held(c.Pass, c.Bucket))}, t.unlock(c.Bucket)...)
}

// unlock lists the deletions of b's partition locks.
func (t *Trainer) unlock(b graph.Bucket) []clientv3.Op {
	var ops []clientv3.Op
	for _, p := range b.Partitions() {
		ops = append(ops, clientv3.OpDelete(t.k.lock(p)))
	}
	return ops
}

func (t *Trainer) renewLease(ctx context.Context) error {
	_ = t.lease.close(ctx) // already expired; revoking fails harmlessly
	l, err := grantLease(ctx, t.c, t.o.LeaseTTL)
	if err != nil {
		return fmt.Errorf("coord: renewing the lease: %w", err)
	}
	t.lease = l
	return nil
}

// Close ends the trainer. After Next returned ErrDone it signs the rank
// off; the rank that finds all World ranks signed off removes the run's
// keys. Otherwise the lease is revoked and whatever the trainer held
// returns to the pool at once.
func (t *Trainer) Close(ctx context.Context) error {
	err := t.lease.close(ctx)
	if t.pass < t.o.Passes {
		return err
	}
	if _, err := t.c.Put(ctx, t.k.left(t.o.Rank), "1"); err != nil {
		return fmt.Errorf("coord: signing off: %w", err)
	}
	resp, err := t.c.Get(ctx, t.k.leftDir(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("coord: signing off: %w", err)
	}
	if resp.Count >= int64(t.o.World) {
		if _, err := t.c.Delete(ctx, t.k.prefix, clientv3.WithPrefix()); err != nil {
			return fmt.Errorf("coord: removing run %q: %w", t.o.Run, err)
		}
	}
	return nil
}
