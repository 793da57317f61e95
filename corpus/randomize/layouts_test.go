package randomize

import (
	"math/rand/v2"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// Test helpers shared by the randomizer tests.

// layoutOf builds a layout from per-chunk sequence lengths.
func layoutOf(chunks ...[]uint32) *corpus.Layout {
	l := &corpus.Layout{ChunkStart: []int{0}}
	for _, c := range chunks {
		l.Samples = append(l.Samples, c...)
		l.ChunkStart = append(l.ChunkStart, len(l.Samples))
	}
	return l
}

// uniformLayout has chunks of perChunk sequences, each of length seqLen.
func uniformLayout(chunks, perChunk int, seqLen uint32) *corpus.Layout {
	cs := make([][]uint32, chunks)
	for c := range cs {
		for range perChunk {
			cs[c] = append(cs[c], seqLen)
		}
	}
	return layoutOf(cs...)
}

// randomLayout draws a layout of 1..maxChunks chunks of 1..maxPer sequences.
// With varying, lengths are 1..5, else all 1; labels are set (0..3) when
// labels is true.
func randomLayout(r *rand.Rand, maxChunks, maxPer int, varying, labels bool) *corpus.Layout {
	cs := make([][]uint32, 1+r.IntN(maxChunks))
	for c := range cs {
		for range 1 + r.IntN(maxPer) {
			n := uint32(1)
			if varying {
				n = 1 + uint32(r.IntN(5))
			}
			cs[c] = append(cs[c], n)
		}
	}
	l := layoutOf(cs...)
	if labels {
		l.Labels = make([]uint32, len(l.Samples))
		for i := range l.Labels {
			l.Labels[i] = uint32(r.IntN(4))
		}
	}
	return l
}

// randomConfig draws a cntk or window config with a window that is
// sometimes smaller, sometimes larger than the corpus.
func randomConfig(r *rand.Rand, kind string) Config {
	cfg := Config{Kind: kind, Seed: r.Uint64N(1000)}
	switch r.IntN(3) {
	case 0:
		cfg.WindowChunks = 1 + r.IntN(6)
	case 1:
		cfg.WindowSamples = 1 + r.Uint64N(40)
	default: // the default window, larger than these corpora
	}
	return cfg
}

func mustNew(t testing.TB, cfg Config, l *corpus.Layout) Randomizer {
	t.Helper()
	r, err := New(cfg, l)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return r
}

// drain returns what a cursor yields until it is exhausted.
func drain(t testing.TB, c Cursor, limit int) []int {
	t.Helper()
	var out []int
	// Alternate NextN in batches of 1, 2, 3, ... with single Next calls, so
	// that every order check also checks that NextN yields what Next does.
	buf := make([]int, 0, 8)
	for k := 1; ; k = k%7 + 1 {
		n := c.NextN(buf[:k])
		out = append(out, buf[:n]...)
		if len(out) > limit {
			t.Fatalf("cursor yields more than %d sequences", limit)
		}
		if n < k {
			if q, ok := c.Next(); ok {
				t.Fatalf("NextN wrote %d of %d, but Next then yields %d", n, k, q)
			}
			if m := c.NextN(buf[:k]); m != 0 {
				t.Fatalf("NextN yields %d more after the end", m)
			}
			return out
		}
		if !nextInto(t, c, &out, limit) {
			return out
		}
	}
}

// drainNext walks c with Next only.
func drainNext(t testing.TB, c Cursor, limit int) []int {
	t.Helper()
	var out []int
	for nextInto(t, c, &out, limit) {
	}
	return out
}

// nextInto appends c.Next() to out and reports whether there was one,
// failing the test once out holds more than limit ordinals.
func nextInto(t testing.TB, c Cursor, out *[]int, limit int) bool {
	t.Helper()
	q, ok := c.Next()
	if !ok {
		return false
	}
	*out = append(*out, q)
	if len(*out) > limit {
		t.Fatalf("cursor yields more than %d sequences", limit)
	}
	return true
}

// walk returns sweep s's whole order.
func walk(t testing.TB, r Randomizer, l *corpus.Layout, s uint64) []int {
	t.Helper()
	c, at := r.Sweep(s).Seek(0)
	if at != 0 {
		t.Fatalf("Seek(0) at %d", at)
	}
	return drain(t, c, l.NumSequences())
}

var allKinds = []string{"none", "cntk", "window"}
