// Package train trains PyTorch-BigGraph-style graph embeddings on the
// batches of graph/plan: for each bucket of the plan, in the plan's order,
// it keeps only that bucket's entity partitions in memory, evaluates the
// bucket's holdout, trains the bucket's batches with Hogwild workers (one
// goroutine per worker share, no locks), evaluates the holdout again and,
// every few buckets, commits a checkpoint. The mathematics live in graph/train/model;
// filtered evaluation of a checkpoint in graph/eval.
//
// A checkpoint is a directory (the config's checkpoint_path) holding
// checkpoint.json, the manifest, and the files it names: one
// emb_{type}_{partition}.v{seq}.bin per trained partition and one
// model.v{seq}.bin (layouts in tablefile.go and docs/training.md).
//
// Invariants (tests cite them by number):
//
//  1. Batches: every bucket trains exactly the batches plan.PrepareBucket
//     gives for its coordinates, worker w's share on worker goroutine w
//     (with interleave_buckets, the shares of a group of resident buckets
//     interleaved in a seeded order; group.go);
//     uniform negatives come from mix streams keyed by (seed, epoch, edge
//     set, chunk, bucket, worker, batch), drawn from the side's partition
//     (negatives = "bucket") or uniformly over every resident partition of
//     its entity type (negatives = "buffer"; model.Pool), which then all
//     change with the bucket.
//  2. Hogwild: workers update the shared tables and parameters without
//     locks; with one worker training is a deterministic function of the
//     config and the data.
//  3. Memory: the partition buffer (buffer.go) holds at most c =
//     partition_buffer partitions of each entity type, the current
//     bucket's among them; a partition leaves it by Belady's rule (the one
//     used furthest ahead), written back when changed, dropped when not.
//     At most one more is in flight: written behind, then (once that
//     one is durable and released) loaded ahead for the next bucket (none
//     with Options.SequentialIO); the others were written when they left
//     memory and are loaded again when a bucket needs them (loads and
//     bytes counted, per epoch as PredictIO predicts them). The buffer's
//     content is a function of the position (a resumed run replays it). The overlap
//     changes no checkpoint (pipeline.go, W1-W6). The trainer's partitions
//     are mapped outside the Go heap and released where it drops them
//     (model.MapTable), before the next is loaded; partition files are
//     written and read in pieces, never as a second copy.
//  4. Checkpoints: every Config.CheckpointEvery buckets of an epoch, after
//     an epoch's last bucket and when the run stops, new files and then
//     the manifest (versioned, with the SHA-256 of every file and of
//     itself) are written atomically; between commits, partitions leaving
//     memory are written as files of the next checkpoint, named by no
//     manifest yet. A crash at any moment leaves the previous or the new
//     checkpoint whole. A run continues from the manifest's position:
//     killed at any moment and restarted, it trains the batches an
//     uninterrupted run would, and with one worker ends with the same
//     embeddings bit for bit, whatever the commit interval.
//  5. A checkpoint made with a config that differs in a key that decides
//     training (everything but paths, num_epochs and logging knobs; plus
//     the resolved worker count and the edge store's fingerprint) is
//     refused, naming every differing key with both values.
//  6. Holdout: with eval_fraction > 0 each bucket's held-out edges are
//     ranked before and after training it, PBG-style (eval_num_batch_negs
//     in-chunk and eval_num_uniform_negs uniform negatives, ties against
//     the edge, candidates that are the true entity itself skipped); they
//     are never trained on.
//  7. Settings the trainer does not implement (featurized entities,
//     per-type dimensions, bias, max_norm, half_precision, several
//     machines through num_machines, regularizers other than N3) are
//     refused with the key named.
//  8. Distributed mode (RunDistributed; distributed.go, diststate.go): W
//     ranks share the buckets through graph/coord, so every bucket of
//     every pass is committed exactly once. A rank trains its bucket from
//     the committed versions of the bucket's partitions and of the shared
//     parameters (relation operators, global embeddings); it writes the
//     partitions to files named by its claim, then commits, in the claim's
//     commit transaction and only while the claim is held, the partitions'
//     new versions and the shared state: the parameters with this bucket's
//     change (after - before) added to the latest committed ones, the
//     history and the counters, conditional on the state it merged into
//     (a concurrent commit makes it merge again), so no update is lost. A
//     lost claim publishes nothing. After every commit, under a lock on
//     the directory, checkpoint.json is rewritten from the latest committed
//     state (never backwards) and superseded files are removed, so eval,
//     export and a single-process train of the finished run read it as
//     their own.
//  9. Memory: EvalMemory bounds, from the config and the store's entity
//     counts alone, the bytes eval's and export's tables and scratch will
//     take, so that a command can refuse a run the machine
//     cannot hold before allocating it (the config's own limits bound
//     each key; this bounds their product with the entity counts).
//     Predict is training's model of its peak memory (resident
//     partitions, prefetch, workers, a chunk's edges, runtime) and
//     checkpoint size; CheckBudget and CheckDisk refuse a run over its
//     budget or the free disk, naming the smallest num_partitions that
//     fits.
//  10. Divergence: after each bucket's training, before its checkpoint,
//     the bucket's loss and every parameter it can have changed (its
//     partitions' embeddings, the relation operators, the global
//     embeddings) are checked; a NaN or infinity stops the run with
//     ErrNotFinite naming the bucket and the value, and nothing of that
//     bucket is written: the last checkpoint stays the last good one.
//  11. One run per checkpoint directory (runlock.go): a single-process run
//     holds train.lock exclusively from New to the end of Run, each
//     distributed rank holds it shared and rank-R.lock exclusively; a
//     conflicting run is refused with ErrInUse naming the holder's pid and
//     host. Readers (LoadCheckpoint, VerifyCheckpoint) take no lock and
//     read one whole commit, starting again when the manifest changed
//     under them (ReadConsistent).
//  12. Only its own files: a run deletes a checkpoint file or temporary
//     only when the manifest lists it as superseded, or its version is
//     the next checkpoint's or one the training log records (a checkpoint
//     number, or a claim, logged before its files are written); other
//     files are reported (Options.Note, DistOptions.Note) and kept.
//  13. A distributed run's identity includes its directory (runid.go): a
//     random id in distributed_run.json and in the run's etcd state; a
//     rank refuses etcd state its directory does not hold.
package train
