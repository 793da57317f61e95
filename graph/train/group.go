package train

import (
	"context"

	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/internal/mix"
)

// Interleaved buckets (interleave_buckets; docs/training.md, "Interleaved
// buckets"). Trained one after the other, the buckets of an epoch pull
// each partition's embeddings toward the few partitions it has just met;
// with the partition buffer holding c partitions, up to c x c buckets are
// trainable at once. A group is a run of consecutive positions of the
// order, from a bucket to the last one whose partitions are all resident
// without a load, inside one chunk of one edge set. The group's buckets are prepared
// and trained together: each worker steps through the batches of its
// shares of all of them in one seeded order, every batch with the
// negatives it would have had alone. The group is a function of its first
// position and the buffer's content there, which is a function of the
// position (buffer.go); commits and stops fall only between groups (a
// commit due inside one waits for its end), so a run resumed at a
// checkpoint forms the groups an uninterrupted run forms, and the commit
// interval (checkpoint_buckets) changes nothing that is trained.

// tagInterleave is the mix purpose tag of a group's batch order.
const tagInterleave uint64 = 0x696e746c76 // "intlv"

// trained is a bucket trained with an earlier position of its group: its
// event and summed loss, waiting for the loop to reach its position.
type trained struct {
	ev   Event
	loss float64
}

// groupAt lists the positions trained together from pos (pos alone
// without interleave_buckets): pos, then each next position in the same
// chunk of the same edge set whose partitions are all resident.
func (t *Trainer) groupAt(pos Position) []Position {
	ps := []Position{pos}
	if !t.cfg.InterleaveBuckets {
		return ps
	}
	l, r := t.plan.Shape()
	for p := pos; ; {
		next := t.advance(p, l*r)
		if !t.groupGoesOn(p, next) {
			return ps
		}
		ps = append(ps, next)
		p = next
	}
}

// groupGoesOn reports whether the bucket at next is trained in the group
// of the one at pos, which it follows: with interleave_buckets, in the
// same chunk of the same edge set, its partitions all resident.
func (t *Trainer) groupGoesOn(pos, next Position) bool {
	return t.cfg.InterleaveBuckets && next.Epoch == pos.Epoch && next.EdgeSet == pos.EdgeSet &&
		next.Chunk == pos.Chunk && !t.needsLoad(next)
}

// trainGroup prepares and trains the buckets at ps together (see above);
// trainPrepared does the rest.
func (t *Trainer) trainGroup(ctx context.Context, ps []Position, weights *weightCheck) ([]trained, error) {
	pbs := make([]*plan.Prepared, len(ps))
	for i, pos := range ps {
		pb, err := t.plan.PrepareBucket(ctx, pos.Epoch, pos.EdgeSet, pos.Chunk, t.bucketAt(pos))
		if err != nil {
			return nil, err
		}
		weights.add(pos.Epoch, pb.Data())
		pbs[i] = pb
	}
	return t.trainPrepared(ctx, ps, pbs)
}

// trainPrepared trains the prepared buckets pbs (at positions ps) together,
// ranking each one's holdout before and after (invariant 6), and returns
// each bucket's event (without I/O and progress counts) and summed loss.
func (t *Trainer) trainPrepared(ctx context.Context, ps []Position, pbs []*plan.Prepared) ([]trained, error) {
	out := make([]trained, len(ps))
	for i, pb := range pbs {
		out[i].ev = Event{Position: ps[i], Bucket: pb.Bucket, Holdout: len(pb.Holdout())}
		if out[i].ev.Holdout > 0 {
			m := t.holdout(pb, 0)
			out[i].ev.HoldoutBefore = &m
		}
	}
	losses, counts, err := t.trainBuckets(ctx, pbs, t.groupOrder(ps[0], pbs))
	if err != nil {
		return nil, err
	}
	for i, pb := range pbs {
		ev := &out[i].ev
		if err := t.checkFinite(ev.Position, ev.Bucket, losses[i]); err != nil {
			return nil, err
		}
		out[i].loss = losses[i]
		ev.Edges = counts[i]
		if counts[i] > 0 {
			ev.Loss = losses[i] / float64(counts[i])
		}
		if ev.Holdout > 0 {
			m := t.holdout(pb, 1)
			ev.HoldoutAfter = &m
		}
	}
	return out, nil
}

// groupOrder returns, for each worker, the index into pbs of each batch it
// trains, in order: every bucket's share of the worker, interleaved by a
// shuffle seeded by the config's seed and the group's first position. A
// group of one bucket trains its shares in order (nil).
func (t *Trainer) groupOrder(first Position, pbs []*plan.Prepared) [][]int32 {
	if len(pbs) == 1 {
		return nil
	}
	order := make([][]int32, pbs[0].Workers())
	for w := range order {
		var seq []int32
		for i, pb := range pbs {
			for range pb.NumBatches(w) {
				seq = append(seq, int32(i))
			}
		}
		rng := mix.Rand(t.cfg.Seed, tagInterleave, uint64(first.Epoch), uint64(first.EdgeSet), uint64(first.Chunk),
			uint64(first.Index), uint64(w))
		rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
		order[w] = seq
	}
	return order
}
