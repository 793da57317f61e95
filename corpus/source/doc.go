// Package source is the MinibatchSource: it walks a corpus's nominal
// timeline (SPEC A2) in minibatches of whole sequences, cuts epochs, splits
// each global minibatch among data-parallel ranks, and saves and restores
// its place as a small JSON state.
//
// A Source is built from a corpus.Source (the ctf reader, or the in-memory
// corpus.Memory) and a Config. The randomize package supplies each sweep's
// order; the Source holds the only mutable state: a position (a count of
// samples since the start of sweep 0), the cumulative label count at that
// position, and a step counter. Everything else is recomputed from them,
// which is why a checkpoint is three integers and a fingerprint.
//
// Invariants (tests cite them by number):
//
//  1. Packing (SPEC A3.1). A minibatch starting at position P takes whole
//     sequences in timeline order while the total sample count stays <= K;
//     the first sequence is always taken, even when it alone exceeds K.
//     Start = P and End = P + the samples taken; the next minibatch starts
//     at End.
//  2. Order independence (A3.2). Concatenating the sequences of successive
//     minibatches gives the timeline order whatever the sizes asked for. On
//     a corpus of one-sample sequences, NextK(2K) holds exactly the samples
//     of two NextK(K) calls and K calls of NextK(1) those of one NextK(K)
//     (when no sweep or epoch end cuts them), and M/K calls of NextK(K)
//     cover every sample once.
//  3. Sweeps (A2.1, A3.3). Sweep s covers positions [s*M, (s+1)*M) and
//     visits every sequence once. Sweep is the sweep of the minibatch's
//     first sequence; EndOfSweep is set when the minibatch ends at or
//     crosses a sweep end (End/M > Start/M). Minibatches cross sweep ends
//     unless CutAtSweep, which ends every minibatch at the sweep end.
//  4. Epochs (A3.4). Let C be the cumulative label count before a position.
//     With an epoch size of N label samples, a minibatch starting at C
//     belongs to epoch e = floor(C/N) and ends, with EndOfEpoch set, after
//     the first sequence at which C reaches or passes (e+1)*N; no minibatch
//     crosses an epoch end. When one sequence passes several thresholds
//     (a sequence with more labels than N) the epochs in between are empty:
//     the next minibatch reports epoch floor(C/N), so epoch numbers can
//     jump, and OnEpochEnd is called once, for the epoch that ended. With
//     EpochFull, epoch k is exactly sweep k (minibatches are cut at sweep
//     ends); with EpochInf there is one endless epoch 0.
//  5. Schedule (A3.5). Next uses Schedule.At(epoch of the next minibatch);
//     NextK ignores the schedule.
//  6. Workers (A4). Every rank computes the same global minibatch from the
//     layout alone and keeps one contiguous group of its sequences: with
//     prefix sums S_0 = 0 < S_1 < ... < S_n = T of the sequences' sample
//     counts, rank r of W gets sequences [b(r), b(r+1)), where b(0) = 0,
//     b(W) = n and b(r) is the j minimizing |S_j*W - r*T|, the later j on a
//     tie. The union over ranks is exactly the single-worker minibatch; a
//     rank with an empty group still takes the step. With SplitChunks a
//     rank keeps instead the sequences whose chunk c has (c+ChunkShift)
//     mod W = r, in timeline order: the union is the same. A rank loads
//     only the chunks holding its own sequences.
//  7. Resume (A5.2). Restore(State()) taken after any step, through the
//     JSON encoding, gives exactly the minibatches the uninterrupted run
//     gives, for any Workers and Rank. A position inside a sequence moves
//     to the next sequence boundary. Seek(P) does the same and counts steps
//     from 0 there.
//  8. Fingerprint (A5.1, A5.3). The state's fingerprint covers the corpus
//     identity (Fingerprinter) and layout (hence the chunking), streams,
//     randomizer kind, seed, window and epoch size; Restore refuses a state
//     whose fingerprint differs and names every differing field with both
//     values. Schedule, CutAtSweep, Workers, Rank and SplitChunks are not
//     covered.
//  9. Memory and scheduling. Parsed chunks live in an LRU cache of
//     Randomizer.MaxResidentChunks()+1 chunks, plus PrefetchChunks places
//     for the next window's chunks when they are prefetched, or ParseAhead
//     in file order from a corpus that reads ahead only what it is told
//     of (ResidentChunks). Assembling
//     a minibatch pins at most that many chunks at once and none between
//     calls, so no parsed chunk outlives its cache entry by more than one
//     call. Prefetching, eviction, reading ahead in the cursor, the layout
//     of a chunk in memory (a window randomizer's chunks are arranged in
//     the order their window visits them, see arrange.go) and goroutine
//     timing never change what is delivered.
//  10. Bad sequences. A sequence the corpus could not parse keeps its
//     positions on the timeline (the timeline is laid out from the index);
//     it is listed in Minibatch.Skipped with its error, never dropped
//     silently, and its data are absent from Sequences and Streams.
//
// A Minibatch and its slices are reused by the next call; copy what must
// outlive it.
package source
