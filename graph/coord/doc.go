// Package coord runs PyTorch-BigGraph's distributed bucket scheduling on
// etcd: W trainers, each its own process on any machine, share the buckets
// of every pass (epoch, edge set, edge chunk) under the rules of package
// graph/sched, with etcd as the only shared state. It also starts a
// single-node etcd in-process (Serve) for one machine and for tests.
//
// A trainer Joins a run (named by Options.Run; its keys live under
// /batchprep/runs/RUN/, so runs share a cluster), then loops: Next blocks
// until it is given a bucket, the trainer works on it, Commit marks it done.
// Next returns ErrDone at the end of the run, and Close signs the rank off;
// the rank that finds all World ranks signed off removes the run's keys.
//
// A claim is one etcd transaction that succeeds only if the bucket's two
// partition locks are free and the bucket is neither held nor done in the
// pass (it tries up to four buckets, in the policy's order, as nested
// transactions, so that a race lost for the first costs no round trip); the lock and held keys are tied to the trainer's lease, which a
// goroutine keeps alive. A trainer that dies stops its keep-alives: when
// the lease expires etcd deletes its keys and the bucket is free again, not
// done; it is trained again by whoever gets it, from the partitions' last
// committed versions. Commit is a transaction that succeeds only while the
// claim's held key still exists with the claim's revision, so work done
// under an expired lease is never counted. The commit transaction also
// claims the trainer's next bucket when its view of the pass shows one
// free (a claim made ahead, with the same comparisons; a lock the two
// buckets share passes from one to the other), so that a bucket usually
// costs one transaction, not two; Next then returns that claim at once.
//
// Invariants (tests cite them by number; graph/sched's hold through etcd):
//
//  1. Exactly once: for each pass, every bucket is committed exactly once,
//     whatever trainers die, pause or join.
//  2. Exclusion: no two claims whose buckets share a partition are held at
//     once; a trainer whose lease expired learns it from Valid before it
//     does more work and from Commit (ErrLost) before its work counts.
//  3. First pass: in pass 0 every claim after the first shares a partition
//     with an earlier claim (claim numbers are etcd revisions, so "earlier"
//     is the grant order over all ranks).
//  4. Lease bound: Valid is true only while the lease is certainly alive
//     (the time a keep-alive was sent plus the TTL etcd granted).
//  5. Progress: when a holder dies its bucket returns to the pool within
//     the lease TTL (plus etcd's expiry check), and waiting trainers are
//     woken by a watch, not by polling.
//  6. Cleanup: when all World ranks have seen the run end, the run's keys
//     are removed. A trainer joining after that starts a new run of the
//     same name.
//  7. Fenced writes: the keys a trainer publishes with CommitWith are
//     written in the transaction that marks the bucket done, only while
//     its claim is held; a trainer whose claim was lost writes nothing.
//  8. Lost leases are seen: when etcd answers that the lease is gone, the
//     keep-alive marks it lost (Lost), and the next Next takes a new one.
//  9. etcd away: a Watchdog probes etcd about once a second, says when it
//     stops and starts answering, and cancels its context with an
//     *UnreachableError once no probe succeeded for its timeout, so that
//     no rank waits for ever on a vanished server.
package coord
