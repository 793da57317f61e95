// Package mixture reads several corpora as one weighted mixture on a
// nominal timeline, with the minibatches, epochs, data-parallel split and
// state of a single corpus (package source).
//
// Each corpus k keeps its own timeline: its own sweeps, one after the
// other, each in its own random order. A small corpus therefore repeats
// (its next sweep is a fresh order) while a large one is in mid-sweep. The
// mixture interleaves whole sequences by a deterministic schedule, not by
// drawing: a sequence of corpus k that starts at position p of k's
// timeline gets the key p / w_k, and the mixture's timeline holds every
// corpus's sequences in key order, a tie going to the lower corpus index.
// Weights are integers a_k over their sum A (w_k = a_k / A); keys compare
// as 128-bit products p_a * a_b and p_b * a_a, so the order is exact and
// the same on every machine.
//
// Invariants (tests cite them by number):
//
//  1. Proportion. After any whole number of sequences of the mixture's
//     timeline (so after every minibatch), with T mixture samples of which
//     c_k are corpus k's, and L_k corpus k's longest sequence:
//     -w_k * (sum over j != k of L_j) <= c_k - w_k * T <= (1 - w_k) * L_k.
//     Proof: such a prefix holds every sequence with key < t and some
//     with key = t, for some t. Corpus k's first sequence left out starts
//     at c_k and has key >= t, so c_k >= w_k*t; its last one taken starts
//     at or before w_k*t, so c_k <= w_k*t + L_k. With e_k = c_k - w_k*t in
//     [0, L_k] and T - t = sum of e_j (the weights sum to 1),
//     c_k - w_k*T = (1 - w_k)*e_k - w_k*(sum over j != k of e_j). Both ends
//     are reached. Two corpora: each is within one longest sequence of
//     w_k*T.
//  2. Own timelines. Corpus k's sequences, in the mixture's order, are
//     exactly those of a source.Source over corpus k alone with the
//     randomizer's seed mix.Seed(seed, k) (a derived seed: mixing, never
//     adding), read from position 0.
//  3. Packing and order independence, as source invariants 1 and 2 with
//     the mixture's samples: a minibatch takes whole sequences of the
//     mixture's timeline while the total stays <= K, the first always;
//     concatenating minibatches gives the same timeline whatever the sizes.
//  4. Epochs and schedule, as source invariants 4 and 5, counting the
//     label samples of all corpora; no minibatch crosses an epoch end.
//  5. Sweeps. The mixture's sweeps are those of its anchor: the corpus
//     whose sweep spans the most of the mixture's timeline (largest
//     M_k / w_k; the lowest index on a tie), so each other corpus passes
//     at least one sweep's worth of samples during one of them. Sweep is
//     the anchor's sweep at the minibatch's start; EndOfSweep is set when
//     the anchor's sweep changes within it; CutAtSweep ends minibatches
//     there; EpochFull makes epoch e the anchor's sweep e.
//  6. Workers (source invariant 6). Every rank plans the same global
//     minibatch and keeps the group [b(r), b(r+1)) chosen by
//     source.SplitRange from the prefix sums of its sequences' sample
//     counts; the union over ranks is the single-worker minibatch. A rank
//     loads only the chunks of its own group (other sequences are passed
//     over with source.Source.Advance).
//  7. Resume and seek. Restore(State()), through the JSON encoding, gives
//     exactly the minibatches an uninterrupted run gives, for any Workers
//     and Rank. Seek(P) moves to the first boundary of the mixture's
//     timeline at or after P: it places each corpus at the key
//     t0 = P - (sum of longest sequences), which by invariant 1 lies at or
//     before P, and walks at most that many sequences; with one window of
//     randomizer work per corpus, it costs the same at sweep 10^9 as at 0.
//  8. Fingerprint. The state names each corpus (its Source's fingerprint
//     under "mix<k>."), each weight as a reduced fraction, the seed,
//     randomizer, window, epoch size and streams; Restore refuses a state
//     of another setup naming every differing field (FingerprintError).
//     Workers, Rank, schedule and CutAtSweep are not covered.
//
// Every corpus must declare the same streams (names, dimensions, dense or
// sparse); New refuses one that differs, naming both corpora and the
// stream, and a corpus that can count its streams' samples (Parquet) and
// has none of a stream another corpus has.
package mixture
