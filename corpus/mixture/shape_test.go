package mixture

import (
	"errors"
	"testing"
)

func TestShapeOf(t *testing.T) {
	w := func(s string) Weight {
		x, err := ParseWeight(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	// Sweeps of 100 and 30 samples at 0.7 and 0.3: corpus 0's spans
	// 100 / 0.7 = 142 mixture samples, corpus 1's 30 / 0.3 = 100.
	s, err := ShapeOf([]uint64{100, 30}, []Weight{w("0.7"), w("0.3")})
	if err != nil {
		t.Fatal(err)
	}
	if s.Anchor != 0 || s.Total != 10 || s.Weights[0] != 7 || s.Span(0) != 142 || s.Span(1) != 100 {
		t.Fatalf("shape %+v, spans %d %d", s, s.Span(0), s.Span(1))
	}
	// A tie goes to the lower index; a larger span wins.
	if s, _ := ShapeOf([]uint64{10, 10}, []Weight{w("1"), w("1")}); s.Anchor != 0 {
		t.Fatalf("tie: anchor %d", s.Anchor)
	}
	if s, _ := ShapeOf([]uint64{10, 11, 5}, []Weight{w("samples:3"), w("samples:3"), w("samples:1")}); s.Anchor != 2 {
		t.Fatalf("anchor %d, want 2 (5 / (1/7) > 11 / (3/7))", s.Anchor)
	}
	// A span past 64 bits saturates.
	if s, _ := ShapeOf([]uint64{1 << 63, 1}, []Weight{w("0.000000000000000001"), w("1")}); s.Span(0) != 1<<64-1 {
		t.Fatalf("span %d, want saturated", s.Span(0))
	}
	if _, err := ShapeOf([]uint64{1}, []Weight{w("1"), w("2")}); err == nil {
		t.Fatal("mismatched lengths accepted")
	}
	if _, err := ShapeOf([]uint64{0, 4}, []Weight{w("1"), w("2")}); err == nil {
		t.Fatal("an empty corpus accepted")
	}
	if _, err := ShapeOf([]uint64{3, 4}, []Weight{w("1"), w("samples:2")}); !errors.Is(err, ErrWeight) {
		t.Fatalf("mixed kinds: %v", err)
	}
}

func TestCorpusError(t *testing.T) {
	inner := errors.New("bad chunk")
	var err error = &CorpusError{Corpus: 1, Name: "b.ctf", Err: inner}
	if err.Error() != "corpus 1 (b.ctf): bad chunk" || !errors.Is(err, inner) {
		t.Fatalf("%v", err)
	}
}
