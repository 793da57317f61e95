package coord

import (
	"context"
	"fmt"
	"strings"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/sched"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// view is a pass's state as read at one etcd revision.
type view struct {
	pass int
	st   *sched.State
	rev  int64
}

// known is what a trainer has read of its pass that cannot be undone
// within a run: done buckets and (pass 0) given buckets. Each read asks
// only for such keys created after rev; held keys, which come and go, are
// read in full (there are at most W).
type known struct {
	pass        int
	rev         int64
	done, given []graph.Bucket
	held        map[graph.Bucket]bool
}

// stateOps are the reads that bring pass t.pass's view up to date; claim
// and commit transactions append them so that a trainer rarely needs a
// read of its own.
func (t *Trainer) stateOps() []clientv3.Op {
	if t.known.pass != t.pass || t.known.held == nil {
		t.known = known{pass: t.pass, held: map[graph.Bucket]bool{}}
	}
	since := clientv3.WithMinCreateRev(t.known.rev + 1)
	ops := []clientv3.Op{
		clientv3.OpGet(t.k.doneDir(t.pass), clientv3.WithPrefix(), clientv3.WithKeysOnly(), since),
		clientv3.OpGet(t.k.heldDir(t.pass), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
	}
	if t.pass == 0 && !t.o.NoTreeInit {
		ops = append(ops, clientv3.OpGet(t.k.givenDir(), clientv3.WithPrefix(), clientv3.WithKeysOnly(), since))
	}
	return ops
}

// snapshot reads pass t.pass's state at one revision.
func (t *Trainer) snapshot(ctx context.Context) (*view, error) {
	resp, err := t.c.Txn(ctx).Then(t.stateOps()...).Commit()
	if err != nil {
		return nil, fmt.Errorf("coord: reading pass %d: %w", t.pass, err)
	}
	return t.parseView(resp.Responses, resp.Header.Revision)
}

// parseView builds the view from the responses of the stateOps built last,
// read at revision rev.
func (t *Trainer) parseView(rs []*etcdserverpb.ResponseOp, rev int64) (*view, error) {
	dirs := []string{t.k.doneDir(t.pass), t.k.heldDir(t.pass), t.k.givenDir()}
	kn := &t.known
	clear(kn.held)
	for i, r := range rs {
		for _, kv := range r.GetResponseRange().Kvs {
			b, err := t.parseKey(string(kv.Key), dirs[i])
			if err != nil {
				return nil, err
			}
			switch i {
			case 0:
				kn.done = append(kn.done, b)
			case 1:
				kn.held[b] = true
			default:
				kn.given = append(kn.given, b)
			}
		}
	}
	kn.rev = max(kn.rev, rev)
	return t.buildView(rev), nil
}

// applyEvents brings the view up to date from watch events (what changed
// after the last view), without a read.
func (t *Trainer) applyEvents(evs []*clientv3.Event) (*view, error) {
	kn := &t.known
	done, held, given := t.k.doneDir(t.pass), t.k.heldDir(t.pass), t.k.givenDir()
	tree := t.pass == 0 && !t.o.NoTreeInit
	for _, ev := range evs {
		key := string(ev.Kv.Key)
		put := ev.Type == clientv3.EventTypePut
		switch {
		case strings.HasPrefix(key, done) && put:
			b, err := t.parseKey(key, done)
			if err != nil {
				return nil, err
			}
			kn.done = append(kn.done, b)
		case strings.HasPrefix(key, held):
			b, err := t.parseKey(key, held)
			if err != nil {
				return nil, err
			}
			if put {
				kn.held[b] = true
			} else {
				delete(kn.held, b)
			}
		case tree && strings.HasPrefix(key, given) && put:
			b, err := t.parseKey(key, given)
			if err != nil {
				return nil, err
			}
			kn.given = append(kn.given, b)
		}
		kn.rev = max(kn.rev, ev.Kv.ModRevision)
	}
	return t.buildView(kn.rev), nil
}

func (t *Trainer) parseKey(key, dir string) (graph.Bucket, error) {
	b, err := parseBucket(key, dir)
	if err == nil && (b.Lhs >= t.o.L || b.Rhs >= t.o.R) {
		err = fmt.Errorf("coord: key %q outside the %dx%d grid: another run with this name?", key, t.o.L, t.o.R)
	}
	return b, err
}

// buildView makes the scheduler state of what the trainer knows.
func (t *Trainer) buildView(rev int64) *view { return t.buildViewAfter(rev, nil) }

// buildViewAfter is buildView as it will be once the trainer's own held
// bucket fin is done (nil: as it is).
func (t *Trainer) buildViewAfter(rev int64, fin *graph.Bucket) *view {
	var order []graph.Bucket
	if t.o.Order != nil {
		order = t.o.Order(t.pass)
	}
	tree := t.pass == 0 && !t.o.NoTreeInit
	st := sched.NewState(sched.Pass{L: t.o.L, R: t.o.R, Order: order, TreeInit: tree})
	kn := &t.known
	for _, b := range kn.done {
		st.MarkDone(b)
	}
	for _, b := range kn.given {
		st.MarkGiven(b)
	}
	for b := range kn.held {
		if fin == nil || b != *fin {
			st.MarkHeld(b)
		}
	}
	if fin != nil {
		st.MarkGiven(*fin)
		st.MarkDone(*fin)
	}
	return &view{pass: t.pass, st: st, rev: rev}
}
