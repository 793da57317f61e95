package randomize

import (
	"slices"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// fuzzLayout turns bytes into a layout: each byte is one sequence of
// 1 + b%7 samples and (b>>3)%4 labels; a byte with its top bit set starts
// a new chunk.
func fuzzLayout(data []byte) *corpus.Layout {
	if len(data) > 300 {
		data = data[:300]
	}
	l := &corpus.Layout{ChunkStart: []int{0}}
	for i, b := range data {
		if b&0x80 != 0 && i > 0 {
			l.ChunkStart = append(l.ChunkStart, i)
		}
		l.Samples = append(l.Samples, 1+uint32(b%7))
		l.Labels = append(l.Labels, uint32(b>>3)%4)
	}
	if len(data) > 0 {
		l.ChunkStart = append(l.ChunkStart, len(data))
	}
	return l
}

// FuzzSeek: on any layout, window, sweep and offset, Seek never panics,
// agrees with walking the sweep from 0 (invariant 2), LabelsBefore agrees
// with the walk (invariant 3), and the sweep is a permutation (invariant 1).
func FuzzSeek(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0x83, 4, 0x85}, uint64(0), uint8(1), uint16(4), uint64(0), uint64(3))
	f.Add([]byte{0x80, 0x81, 0x82, 0x83, 0x84}, uint64(7), uint8(2), uint16(3), uint64(1e9), uint64(9))
	f.Add([]byte{6, 6, 6, 0x86, 6}, uint64(1), uint8(0), uint16(0), uint64(1), uint64(100))
	f.Add([]byte{}, uint64(0), uint8(2), uint16(1), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, kind uint8, win uint16, sweep, off uint64) {
		l := fuzzLayout(data)
		cfg := Config{Kind: allKinds[int(kind)%len(allKinds)], Seed: seed}
		if win&1 == 1 {
			cfg.WindowSamples = uint64(win >> 1)
		} else {
			cfg.WindowChunks = int(win>>1) % 40
		}
		rz := mustNew(t, cfg, l)
		order := walk(t, rz, l, sweep)
		if !isPermutation(order, l.NumSequences()) {
			t.Fatalf("%+v sweep %d: not a permutation: %v", cfg, sweep, order)
		}
		checkVisits(t, rz, l, sweep)
		M := l.TotalSamples()
		off %= M + 3
		var at, labels uint64
		i := 0
		for i < len(order) && at < off {
			at += uint64(l.Samples[order[i]])
			labels += uint64(l.LabelCount(order[i]))
			i++
		}
		sw := rz.Sweep(sweep)
		c, got := sw.Seek(off)
		if got != at {
			t.Fatalf("%+v sweep %d Seek(%d) at %d, walk %d", cfg, sweep, off, got, at)
		}
		if rest := drain(t, c, len(order)); !slices.Equal(rest, order[i:]) {
			t.Fatalf("%+v sweep %d Seek(%d) yields %v, walk %v", cfg, sweep, off, rest, order[i:])
		}
		if got := sw.LabelsBefore(off); got != labels {
			t.Fatalf("%+v sweep %d LabelsBefore(%d) = %d, walk %d", cfg, sweep, off, got, labels)
		}
	})
}
