package timeline

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MaxPosition is the largest nominal position (and cumulative label count)
// the timeline represents.
const MaxPosition = math.MaxInt64

var (
	// ErrOverflow reports a position or count beyond MaxPosition.
	ErrOverflow = errors.New("timeline: position overflows 2^63-1")
	// ErrEmpty reports a timeline over an empty corpus.
	ErrEmpty = errors.New("timeline: empty corpus (sweep size 0)")
	// ErrOffset reports an offset that does not lie inside a sweep.
	ErrOffset = errors.New("timeline: offset outside the sweep")
)

// Timeline is the nominal timeline of a corpus of M samples per sweep.
type Timeline struct {
	M uint64 // sweep size in samples
}

// Point is a place on the timeline: an offset inside a sweep.
type Point struct {
	Sweep  uint64
	Offset uint64 // 0 <= Offset < M
}

// New returns the timeline of a sweep of m samples (invariant 3).
func New(m uint64) (Timeline, error) {
	if m == 0 {
		return Timeline{}, ErrEmpty
	}
	return Timeline{M: m}, nil
}

// Locate splits a nominal position into its sweep and offset (invariant 1).
// It panics on a zero Timeline, which New never returns.
func (t Timeline) Locate(pos uint64) Point {
	return Point{Sweep: pos / t.M, Offset: pos % t.M}
}

// Position joins a sweep and an offset into a nominal position, failing
// rather than wrapping (invariants 2 and 4).
func (t Timeline) Position(p Point) (uint64, error) {
	if t.M == 0 {
		return 0, ErrEmpty
	}
	if p.Offset >= t.M {
		return 0, fmt.Errorf("%w: offset %d, sweep size %d", ErrOffset, p.Offset, t.M)
	}
	hi, lo := bits.Mul64(p.Sweep, t.M)
	sum, carry := bits.Add64(lo, p.Offset, 0)
	if hi != 0 || carry != 0 || sum > MaxPosition {
		return 0, fmt.Errorf("%w: sweep %d offset %d with sweep size %d", ErrOverflow, p.Sweep, p.Offset, t.M)
	}
	return sum, nil
}

// SweepStart returns the nominal position where sweep s begins.
func (t Timeline) SweepStart(s uint64) (uint64, error) {
	return t.Position(Point{Sweep: s})
}

// String prints the point as "sweep S offset O".
func (p Point) String() string { return fmt.Sprintf("sweep %d offset %d", p.Sweep, p.Offset) }
