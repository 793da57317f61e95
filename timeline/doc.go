// Package timeline is the arithmetic of the nominal timeline: the corpus is
// laid end to end forever, sweep s covering the sample positions
// [s*M, (s+1)*M) where M is the corpus's sample count (the sweep size).
// It converts between a nominal position and a (sweep, offset) pair and
// between cumulative label counts and sweeps, for epoch boundaries. It does
// no I/O and allocates nothing.
//
// Positions are uint64 but limited to MaxPosition (2^63-1) so that they fit
// an int64 and a signed JSON integer as well; CNTK likewise refuses epoch
// sizes above half the size_t range.
//
// Invariants (tests cite them by number):
//
//  1. For M > 0 and every p <= MaxPosition, Locate(p) = (p / M, p % M) and
//     Position(Locate(p)) = p.
//  2. Position(s, off) and EpochEnd never wrap around: a result above
//     MaxPosition is ErrOverflow. Sweep 10^9 of a corpus of 10^9 samples is
//     representable; sweep 10^10 of it is an overflow error.
//  3. An empty corpus (M = 0, or no labels) is ErrEmpty, never a division by
//     zero.
//  4. Position(s, off) with off >= M is an error (ErrOffset): an offset
//     names a place inside one sweep.
//  5. LabelTarget(T) for T >= 1 returns the sweep s and remainder r in
//     [1, L] with T = s*L + r: the cumulative label count T is reached
//     inside sweep s, after r label samples of it.
package timeline
