package timeline

import (
	"fmt"
	"math/bits"
)

// EpochEnd returns the cumulative label count (k+1)*n at which epoch k of n
// label samples ends (invariant 2). The epoch ends after the first sequence
// at which the running label count reaches or passes this value.
func EpochEnd(k, n uint64) (uint64, error) {
	if n == 0 {
		return 0, fmt.Errorf("%w: epoch size 0", ErrEmpty)
	}
	if k == ^uint64(0) {
		return 0, fmt.Errorf("%w: epoch %d of %d", ErrOverflow, k, n)
	}
	hi, lo := bits.Mul64(k+1, n)
	if hi != 0 || lo > MaxPosition {
		return 0, fmt.Errorf("%w: epoch %d of %d label samples", ErrOverflow, k, n)
	}
	return lo, nil
}

// LabelTarget locates a cumulative label count target >= 1 on a timeline
// whose sweeps hold labels label samples each: target is reached inside
// sweep s, after rem in [1, labels] label samples of that sweep
// (invariant 5). A target of 0 is reached before anything is read and is an
// error here.
func LabelTarget(target, labels uint64) (s, rem uint64, err error) {
	if labels == 0 {
		return 0, 0, fmt.Errorf("%w: no label samples", ErrEmpty)
	}
	if target == 0 {
		return 0, 0, fmt.Errorf("timeline: label target must be >= 1")
	}
	s = (target - 1) / labels
	return s, target - s*labels, nil
}
