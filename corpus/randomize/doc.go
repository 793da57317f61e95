// Invariants of package randomize (tests cite them by number; the package
// overview is in randomize.go):
//
//  1. Every sweep of every kind is a permutation: its cursor from Seek(0)
//     yields each ordinal 0..N-1 exactly once, then ok=false.
//  2. Seek(off), for any off, returns the first sequence in the sweep's
//     order whose first sample is at sweep offset >= off, and that offset;
//     the cursor then yields exactly the rest of the walk from 0. An off at
//     or past the sweep size M gives an exhausted cursor and M.
//  3. LabelsBefore(off) is the sum of the label counts of the sequences that
//     come before the one Seek(off) returns (the total when exhausted).
//  4. An order is a pure function of (Config, Layout, sweep): the same
//     inputs give the same order whatever was computed before, in any
//     goroutine. Randomizers and Sweeps are safe for concurrent use;
//     Cursors are not.
//  5. cntk is CNTK's BlockRandomizer, bit for bit: MT19937-64 seeded with
//     seed+sweep (additive, as CNTK), the naive chunk shuffle j = rng() % n,
//     CNTK's chunk- or sample-based rolling window, and the windowed swap
//     of sequences accepted only when both sequences stay inside the window
//     of their new position's chunk. The golden orders of CNTK's own unit
//     tests come out.
//  6. cntk: the sequence at a position of placed chunk k comes from a chunk
//     of window(k), and every window spans at most MaxResidentChunks-1
//     chunks (or all chunks, when MaxResidentChunks equals their number).
//     Computing a sweep costs O(sequences of the sweep); the last sweep is
//     cached, so seeking inside it costs O(64) sequence steps.
//  7. window: the chunk order of sweep s is a uniform permutation
//     (Fisher-Yates, unbiased draws, mix.Rand(seed, s)); the windows cut
//     from it are as documented on type window; the sequences of window i
//     are uniformly permuted (mix.Rand(seed, s, i)). Seeds and sweeps are
//     mixed, never added: seed s sweep 1 is unrelated to seed s+1 sweep 0.
//     A window as large as the corpus is a uniform shuffle of the sweep.
//  8. window: Sweep(s) costs O(chunks) for every s (sweep 10^9 as sweep 0);
//     Seek and LabelsBefore cost O(log chunks) plus one window's ordinals
//     copied and its shuffle run (lazily, front to back) up to the target;
//     a cursor holds one window's ordinals.
//  9. window: a window spans at most MaxResidentChunks-1 chunks (or all
//     chunks, when MaxResidentChunks equals their number). For every kind
//     and layout, MaxResidentChunks >= 1.
//  10. window: Windows(s, c) (WindowLookahead) returns the chunks of the
//     window holding chunk c in sweep s and of the window after it, in
//     placed order, exactly the cuts of invariant 7 (nil after the last).
package randomize
