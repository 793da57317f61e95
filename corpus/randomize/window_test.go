package randomize

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/mix"
)

// Pinned window orders (invariant 7): any change to mixing, the chunk
// shuffle, the window cut or the sequence shuffle shows up here.
func TestWindowGolden(t *testing.T) {
	varying := layoutOf([]uint32{1, 2, 3}, []uint32{4}, []uint32{2, 2}, []uint32{1, 1, 1, 1}, []uint32{5, 1})
	cases := []goldenCase{
		{"spec10", uniformLayout(5, 2, 1), Config{Kind: "window"}, []uint64{0, 1, 2}},
		{"c12w2", uniformLayout(4, 3, 1), Config{Kind: "window", WindowChunks: 2}, []uint64{0, 1, 1000000000}},
		{"varw2s9", varying, Config{Kind: "window", Seed: 9, WindowChunks: 2}, []uint64{0, 1}},
		{"vars5", varying, Config{Kind: "window", Seed: 3, WindowSamples: 5}, []uint64{0, 1}},
		{"vars1", varying, Config{Kind: "window", Seed: 3, WindowSamples: 1}, []uint64{0}},
	}
	checkGolden(t, "window_golden.txt", goldenText(t, goldenHeader, cases))
}

// expectedCuts applies the documented window rule to a chunk order.
func expectedCuts(l *corpus.Layout, order []int32, chunkWin int, sampleWin uint64) [][]int32 {
	var out [][]int32
	var cur []int32
	var in uint64
	for _, c := range order {
		cur = append(cur, c)
		first, end := l.Chunk(int(c))
		for q := first; q < end; q++ {
			in += uint64(l.Samples[q])
		}
		if (sampleWin > 0 && in >= sampleWin) || (sampleWin == 0 && len(cur) == chunkWin) {
			out, cur, in = append(out, cur), nil, 0
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Invariants 7 and 9: the walk is window after window; each window holds
// exactly the sequences of its chunks, cut by the documented rule, in the
// order of a Fisher-Yates shuffle on mix.Rand(seed, sweep, window); its
// span fits MaxResidentChunks.
func TestWindowStructure(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 300 {
		l := randomLayout(r, 12, 6, trial%2 == 0, false)
		cfg := randomConfig(r, "window")
		rz := mustNew(t, cfg, l).(*window)
		wc, ws, _ := windowSizes(cfg)
		for _, s := range []uint64{0, 1, math.MaxUint64} {
			sw := rz.Sweep(s).(*windowSweep)
			wantOrder := make([]int32, l.NumChunks())
			for c := range wantOrder {
				wantOrder[c] = int32(c)
			}
			docShuffle(wantOrder, mix.Rand(cfg.Seed, s))
			if !slices.Equal(sw.chunkOrder, wantOrder) {
				t.Fatalf("chunk order %v, documented %v", sw.chunkOrder, wantOrder)
			}
			order := walk(t, rz, l, s)
			pos := 0
			cuts := expectedCuts(l, sw.chunkOrder, wc, ws)
			for i, cut := range cuts {
				// Invariant 10: every chunk of window i names windows i and i+1.
				var wantNext []int32
				if i+1 < len(cuts) {
					wantNext = cuts[i+1]
				}
				for _, c := range cut {
					cur, next := rz.Windows(s, int(c))
					if !slices.Equal(cur, cut) || !slices.Equal(next, wantNext) || (next == nil) != (wantNext == nil) {
						t.Fatalf("%+v sweep %d: Windows(chunk %d of window %d of %d) = %v %v, want %v %v", cfg, s, c, i, len(cuts), cur, next, cut, wantNext)
					}
				}
				if len(cut) > rz.MaxResidentChunks()-1 && len(cut) != l.NumChunks() {
					t.Fatalf("%+v: window of %d chunks, MaxResidentChunks %d", cfg, len(cut), rz.MaxResidentChunks())
				}
				var want []int32
				for _, c := range cut {
					first, end := l.Chunk(int(c))
					for q := first; q < end; q++ {
						want = append(want, int32(q))
					}
				}
				docShuffle(want, mix.Rand(cfg.Seed, s, uint64(i)))
				got := order[pos : pos+len(want)]
				if !slices.Equal(got, int32s(want)) {
					t.Fatalf("%+v layout %v sweep %d window %d (chunks %v): got %v, want %v", cfg, l.ChunkStart, s, i, cut, got, want)
				}
				pos += len(want)
			}
			if pos != len(order) {
				t.Fatalf("windows cover %d of %d sequences", pos, len(order))
			}
		}
	}
}

// docShuffle is the shuffle as docs/randomization.md defines it, written
// out independently of shuffle.go: for j = 0, 1, ...: k = j + uniform(len-j)
// where uniform(n) is the high word of x*n for the first x whose product's
// low word is not below 2^64 mod n; swap a[j] and a[k].
func docShuffle(a []int32, g *rand.Rand) {
	for j := range a {
		n := uint64(len(a) - j)
		hi, lo := bits.Mul64(g.Uint64(), n)
		for lo < -n%n {
			hi, lo = bits.Mul64(g.Uint64(), n)
		}
		k := j + int(hi)
		a[j], a[k] = a[k], a[j]
	}
}

func int32s(a []int32) []int {
	out := make([]int, len(a))
	for i, v := range a {
		out[i] = int(v)
	}
	return out
}

// Invariant 7: mixing, not adding: seed s sweep 1 is not seed s+1 sweep 0.
func TestWindowSeedsAreMixed(t *testing.T) {
	l := uniformLayout(8, 8, 1)
	for seed := range uint64(20) {
		a := walk(t, mustNew(t, Config{Kind: "window", Seed: seed, WindowChunks: 3}, l), l, 1)
		b := walk(t, mustNew(t, Config{Kind: "window", Seed: seed + 1, WindowChunks: 3}, l), l, 0)
		if slices.Equal(a, b) {
			t.Fatalf("seed %d sweep 1 == seed %d sweep 0", seed, seed+1)
		}
	}
}

// Invariant 8: any sweep number works, and a Seek holds one window, not
// the sweep: the cursor's buffer is the sequences of one window.
func TestWindowSeekHoldsOneWindow(t *testing.T) {
	l := uniformLayout(40, 25, 2) // 1000 sequences, 2000 samples
	rz := mustNew(t, Config{Kind: "window", Seed: 1, WindowChunks: 4}, l)
	for _, s := range []uint64{0, 1e9, math.MaxUint64} {
		sw := rz.Sweep(s).(*windowSweep)
		for _, off := range []uint64{0, 1, 999, 1998} {
			c, at := sw.Seek(off)
			wc := c.(*windowCursor)
			if len(wc.seqs) != 100 {
				t.Fatalf("sweep %d Seek(%d) holds %d ordinals, want one window of 100", s, off, len(wc.seqs))
			}
			if at < off || at > off+1 {
				t.Fatalf("sweep %d Seek(%d) at %d", s, off, at)
			}
		}
		checkSeekAgainstWalk(t, rz, l, s)
	}
}

// needSpy is a corpus.Pager that records the chunks needed.
type needSpy struct{ needed []int }

func (s *needSpy) Need(c int)    { s.needed = append(s.needed, c) }
func (s *needSpy) Release(c int) {}
func (s *needSpy) ReleaseAll()   {}

// A Seek into a window asks for the counts of all of the window's chunks
// before its walk reads them (corpus.Pager), and for none when it lands on
// the window's start.
func TestWindowSeekNeedsTheWindow(t *testing.T) {
	l := uniformLayout(40, 25, 2)
	spy := &needSpy{}
	l.Pager = spy
	sw := mustNew(t, Config{Kind: "window", Seed: 1, WindowChunks: 4}, l).Sweep(7).(*windowSweep)
	sw.Seek(0)
	if len(spy.needed) != 0 {
		t.Fatalf("Seek(0) needed chunks %v", spy.needed)
	}
	sw.Seek(1010) // 10 samples into window 5 of 10
	i := sort.Search(sw.numWindows(), func(i int) bool { s, _ := sw.windowOffset(i); return s > 1010 }) - 1
	want := []int{}
	for _, ch := range sw.chunkOrder[sw.winStart[i]:sw.winStart[i+1]] {
		want = append(want, int(ch))
	}
	if !slices.Equal(spy.needed, want) || len(want) != 4 {
		t.Fatalf("Seek(1010) needed chunks %v, want the window's %v", spy.needed, want)
	}
}

// A sample window >= the corpus is one window; a window of 1 sample is one
// chunk per window.
func TestWindowSampleCutExtremes(t *testing.T) {
	l := layoutOf([]uint32{1, 2}, []uint32{3}, []uint32{1})
	big := mustNew(t, Config{Kind: "window", WindowSamples: 7}, l).Sweep(0).(*windowSweep)
	if big.numWindows() != 1 {
		t.Fatalf("window of M samples: %d windows", big.numWindows())
	}
	one := mustNew(t, Config{Kind: "window", WindowSamples: 1}, l).Sweep(0).(*windowSweep)
	if one.numWindows() != 3 {
		t.Fatalf("window of 1 sample: %d windows, want one per chunk", one.numWindows())
	}
}
