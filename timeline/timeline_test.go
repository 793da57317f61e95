package timeline

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// Invariant 1: Locate and Position are inverse, including near MaxPosition.
func TestLocateRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []uint64{1, 2, 3, 7, 1000, 1 << 32, 1<<32 + 1, 1e9, MaxPosition, MaxPosition - 1}
	for _, m := range sizes {
		tl, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		ps := []uint64{0, 1, m - 1, m, MaxPosition, MaxPosition - 1, MaxPosition / 2}
		for range 200 {
			ps = append(ps, r.Uint64N(MaxPosition+1))
		}
		for _, p := range ps {
			if p > MaxPosition {
				continue
			}
			pt := tl.Locate(p)
			if pt.Sweep != p/m || pt.Offset != p%m || pt.Offset >= m {
				t.Fatalf("M=%d Locate(%d) = %v", m, p, pt)
			}
			back, err := tl.Position(pt)
			if err != nil || back != p {
				t.Fatalf("M=%d Position(%v) = %d, %v; want %d", m, pt, back, err, p)
			}
		}
	}
}

// Invariant 2: sweep 10^9 of a big corpus works; past MaxPosition fails.
func TestPositionOverflow(t *testing.T) {
	tl, _ := New(1e9)
	p, err := tl.SweepStart(1e9)
	if err != nil || p != 1e18 {
		t.Fatalf("SweepStart(1e9) = %d, %v", p, err)
	}
	if _, err := tl.SweepStart(1e10); !errors.Is(err, ErrOverflow) {
		t.Fatalf("sweep 1e10 of 1e9: err = %v, want ErrOverflow", err)
	}
	last := tl.Locate(MaxPosition)
	if p, err := tl.Position(last); err != nil || p != MaxPosition {
		t.Fatalf("Position(Locate(Max)) = %d, %v", p, err)
	}
	// One past the maximum: same sweep, the next offset (if it exists), or the next sweep.
	next := last
	if next.Offset+1 < tl.M {
		next.Offset++
	} else {
		next.Sweep, next.Offset = next.Sweep+1, 0
	}
	if _, err := tl.Position(next); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Position(%v) past MaxPosition: err = %v", next, err)
	}
	// Products that wrap 64 bits must not come back small.
	big, _ := New(1 << 40)
	if _, err := big.SweepStart(1 << 24); !errors.Is(err, ErrOverflow) {
		t.Fatalf("2^64 wrapped: err = %v", err)
	}
	if _, err := big.Position(Point{Sweep: math.MaxUint64, Offset: 5}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("MaxUint64 sweep: err = %v", err)
	}
}

// Invariants 3 and 4.
func TestEmptyAndOffset(t *testing.T) {
	if _, err := New(0); !errors.Is(err, ErrEmpty) {
		t.Fatalf("New(0): %v", err)
	}
	if _, err := (Timeline{}).Position(Point{}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("zero Timeline: %v", err)
	}
	tl, _ := New(10)
	if _, err := tl.Position(Point{Sweep: 1, Offset: 10}); !errors.Is(err, ErrOffset) {
		t.Fatalf("offset == M: %v", err)
	}
}

// Invariant 2 for epochs, invariant 5 for label targets (checked against
// a walk over sweeps).
func TestEpochArithmetic(t *testing.T) {
	if e, err := EpochEnd(0, 100); err != nil || e != 100 {
		t.Fatalf("EpochEnd(0,100) = %d, %v", e, err)
	}
	if e, err := EpochEnd(1e9, 1e9); err != nil || e != (1e9+1)*1e9 {
		t.Fatalf("EpochEnd(1e9,1e9) = %d, %v", e, err)
	}
	for _, c := range [][2]uint64{{math.MaxUint64, 1}, {1 << 32, 1 << 31}, {0, MaxPosition + 1}} {
		if _, err := EpochEnd(c[0], c[1]); !errors.Is(err, ErrOverflow) {
			t.Fatalf("EpochEnd(%d,%d): err = %v", c[0], c[1], err)
		}
	}
	if _, err := EpochEnd(3, 0); !errors.Is(err, ErrEmpty) {
		t.Fatalf("EpochEnd(3,0): %v", err)
	}
	for labels := uint64(1); labels <= 7; labels++ {
		// Walk: the cumulative count after sweep s is (s+1)*labels.
		for target := uint64(1); target <= 60; target++ {
			var s uint64
			for (s+1)*labels < target {
				s++
			}
			gs, rem, err := LabelTarget(target, labels)
			if err != nil || gs != s || rem != target-s*labels || rem < 1 || rem > labels {
				t.Fatalf("LabelTarget(%d,%d) = %d,%d,%v; want sweep %d", target, labels, gs, rem, err, s)
			}
		}
	}
	if _, _, err := LabelTarget(0, 5); err == nil {
		t.Fatal("LabelTarget(0) accepted")
	}
	if _, _, err := LabelTarget(5, 0); !errors.Is(err, ErrEmpty) {
		t.Fatalf("LabelTarget with no labels: %v", err)
	}
	if s, rem, _ := LabelTarget(MaxPosition, 1e9); s*1e9+rem != MaxPosition {
		t.Fatalf("LabelTarget near max: %d %d", s, rem)
	}
}
