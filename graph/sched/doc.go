// Package sched holds the rules by which W trainers share the buckets of one
// pass (one epoch, edge set and edge chunk) in distributed mode: which
// bucket a trainer may be given, which it is given when several are free,
// and a deterministic simulation of W trainers under those rules. It knows
// nothing of etcd or of time; graph/coord applies the same rules to the
// state it reads from etcd.
//
// Partition indices follow package bucket: lhs partition p and rhs
// partition p are one partition (one entity type on both sides), so a
// bucket (i, j) locks partitions i and j.
//
// Invariants (tests cite them by number):
//
//  1. Exactly once: a pass is complete when every one of its L*R buckets is
//     done; a bucket is never given while it is done or held, so it is done
//     at most once. A bucket whose holder gives it up (Abandon: the holder
//     died or lost its lease) returns to the pool, not done.
//  2. Exclusion: a bucket is claimable only when neither of its partitions
//     is held by another bucket: no two held buckets share a partition.
//  3. First pass (TreeInit): the first bucket given in the pass may be any
//     bucket; every later one must have a partition in common with a bucket
//     given before it in the pass (held, done or abandoned), so that every
//     partition's embeddings start next to trained ones (PBG's
//     distributed_tree_init_order).
//  4. Preference (Batchprep policy): among claimable buckets, one that shares
//     a partition with the trainer's previous bucket comes first; among
//     equals, the first in the pass's bucket order read cyclically from
//     place rank*L*R/W (rank 0 of 1: the order's first), except in a
//     TreeInit pass, where every rank reads it from its start. A policy is
//     a pure function of the state, the previous bucket, the rank and W.
//  5. Progress: while a pass is incomplete and no bucket is held, some
//     bucket is claimable; so trainers that finish what they hold never all
//     wait forever.
//  6. Simulation: Simulate is deterministic, every pass's buckets run
//     exactly once, a pass starts only when the previous one has ended, and
//     busy plus idle time equals W times the makespan.
package sched
