package coord

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/batchprep/batchprep/graph"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrConflict is returned by CommitWith when the claim is still held but
// one of the caller's comparisons failed (another trainer changed a key
// the caller read): nothing was written; read again and retry.
var ErrConflict = errors.New("coord: commit condition failed (a shared key changed); retry")

// DataPrefix is a key prefix inside the run's for the caller's own keys
// (for example the versions of the partitions a commit publishes); it is
// removed with the run's keys (invariant 6).
func (t *Trainer) DataPrefix() string { return t.k.prefix + "data/" }

// DataPrefix is the key prefix of run's caller keys (Trainer.DataPrefix),
// known before joining; it fails for a malformed run name.
func DataPrefix(run string) (string, error) {
	k, err := newKeys(run)
	if err != nil {
		return "", err
	}
	return k.prefix + "data/", nil
}

// CommitWith is Commit with the caller's comparisons and operations added
// to the same transaction: ops are applied only if the claim is still held
// and every comparison in cmps holds, atomically with marking the bucket
// done (invariant 7). It returns ErrLost when the claim is gone and
// ErrConflict when only a comparison of cmps failed (the claim is kept).
//
// Unless Options.NoClaimAhead is set, the same transaction also claims the
// bucket the trainer would claim next, when its view of the pass shows one
// free (see Commit).
func (t *Trainer) CommitWith(ctx context.Context, c *Claim, cmps []clientv3.Cmp, ops []clientv3.Op) error {
	start := time.Now()
	held := t.k.held(c.Pass, c.Bucket)
	all := []clientv3.Op{clientv3.OpDelete(held), clientv3.OpPut(t.k.done(c.Pass, c.Bucket), strconv.FormatInt(c.Number, 10))}
	all = append(all, ops...)
	cands := t.aheadCandidates(c)
	if len(cands) > 0 {
		// The locks are released in the claim's branches: a key may be
		// written only once in a transaction.
		all = append(all, t.claimChain(cands, false, &c.Bucket, t.unlock(c.Bucket)))
	} else {
		all = append(all, t.unlock(c.Bucket)...)
	}
	nput := len(all)
	if c.Pass == t.pass {
		all = append(all, t.stateOps()...)
	}
	if1 := append([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(held), "=", c.Number)}, cmps...)
	resp, err := t.c.Txn(ctx).If(if1...).Then(all...).Else(clientv3.OpGet(held)).Commit()
	if err != nil {
		return fmt.Errorf("coord: committing pass %d bucket (%d,%d): %w", c.Pass, c.Bucket.Lhs, c.Bucket.Rhs, err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(cmps) > 0 && len(kvs) == 1 && kvs[0].CreateRevision == c.Number {
			return ErrConflict
		}
		return ErrLost
	}
	b := c.Bucket
	t.prev = &b
	if c.Pass == t.pass {
		// The reads come after the claim's writes: the view shows the
		// bucket claimed ahead as held.
		v, err := t.parseView(resp.Responses[nput:], resp.Header.Revision)
		if err != nil {
			return err
		}
		t.cached = v
	}
	if len(cands) > 0 {
		in := resp.Responses[nput-1].GetResponseTxn()
		if i, _ := whichGranted(in.Succeeded, in.Responses, len(cands)); i >= 0 {
			t.ahead = &Claim{Pass: t.pass, Bucket: cands[i], Number: resp.Header.Revision, Rank: t.o.Rank,
				Overhead: time.Since(start), Ahead: true}
		}
	}
	return nil
}

// aheadCandidates lists the buckets a commit of c tries to claim ahead:
// those Next would try after the commit if the trainer's view of the pass
// is still current. None when claiming ahead is off, c is not of the
// trainer's pass, the pass would be complete, or no bucket is free.
func (t *Trainer) aheadCandidates(c *Claim) []graph.Bucket {
	if t.o.NoClaimAhead || c.Pass != t.pass || t.known.pass != t.pass || t.known.held == nil || t.lease.expired() {
		return nil
	}
	fin := c.Bucket
	v := t.buildViewAfter(t.known.rev, &fin)
	if v.st.Complete() {
		return nil
	}
	b, ok := t.o.Policy(v.st, &fin, t.o.Rank, t.o.World)
	if !ok {
		return nil
	}
	return t.candidates(v, b, &fin, &fin)
}
