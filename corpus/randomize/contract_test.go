package randomize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// checkSeekAgainstWalk checks invariants 2 and 3 for every offset of sweep s
// (0..M+1) against the walk from 0.
func checkSeekAgainstWalk(t testing.TB, r Randomizer, l *corpus.Layout, s uint64) {
	t.Helper()
	order := walk(t, r, l, s)
	sw := r.Sweep(s)
	M := l.TotalSamples()
	// starts[i] = offset of order[i]; labels[i] = label samples before it.
	starts := make([]uint64, len(order)+1)
	labels := make([]uint64, len(order)+1)
	for i, q := range order {
		starts[i+1] = starts[i] + uint64(l.Samples[q])
		labels[i+1] = labels[i] + uint64(l.LabelCount(q))
	}
	for off := uint64(0); off <= M+1; off++ {
		i := 0
		for i < len(order) && starts[i] < off {
			i++
		}
		c, at := sw.Seek(off)
		if at != starts[i] {
			t.Fatalf("sweep %d Seek(%d) at %d, walk says %d", s, off, at, starts[i])
		}
		if rest := drain(t, c, len(order)); !slices.Equal(rest, order[i:]) {
			t.Fatalf("sweep %d Seek(%d) yields %v, walk says %v", s, off, rest, order[i:])
		}
		if got := sw.LabelsBefore(off); got != labels[i] {
			t.Fatalf("sweep %d LabelsBefore(%d) = %d, walk says %d", s, off, got, labels[i])
		}
	}
}

func isPermutation(order []int, n int) bool {
	if len(order) != n {
		return false
	}
	seen := make([]bool, n)
	for _, q := range order {
		if q < 0 || q >= n || seen[q] {
			return false
		}
		seen[q] = true
	}
	return true
}

// Invariants 1, 2 and 3 over many seeds and random layouts, sequences of
// length 1 and of varying lengths, with and without label counts.
func TestContractRandomLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 300 {
		varying := trial%2 == 1
		l := randomLayout(r, 8, 6, varying, trial%3 == 0)
		for _, kind := range allKinds {
			cfg := randomConfig(r, kind)
			rz := mustNew(t, cfg, l)
			for _, s := range []uint64{0, 1, r.Uint64N(1 << 40)} {
				order := walk(t, rz, l, s)
				if !isPermutation(order, l.NumSequences()) {
					t.Fatalf("%+v layout %v sweep %d: %v is not a permutation", cfg, l.ChunkStart, s, order)
				}
				checkSeekAgainstWalk(t, rz, l, s)
				c, _ := rz.Sweep(s).Seek(0)
				if byNext := drainNext(t, c, l.NumSequences()); !slices.Equal(byNext, order) {
					t.Fatalf("%+v sweep %d: Next alone yields %v, mixed with NextN %v", cfg, s, byNext, order)
				}
			}
			if rz.MaxResidentChunks() < 1 {
				t.Fatalf("%+v: MaxResidentChunks %d (invariant 9)", cfg, rz.MaxResidentChunks())
			}
		}
	}
}

// Invariant 1 at the edges: one chunk, one sequence, an empty corpus.
func TestContractEdges(t *testing.T) {
	layouts := map[string]*corpus.Layout{
		"empty":        {ChunkStart: []int{0}},
		"one sequence": layoutOf([]uint32{3}),
		"one chunk":    layoutOf([]uint32{1, 2, 3, 4}),
		"singletons":   layoutOf([]uint32{2}, []uint32{1}, []uint32{5}),
	}
	for name, l := range layouts {
		for _, kind := range allKinds {
			for _, cfg := range []Config{{Kind: kind}, {Kind: kind, WindowChunks: 1}, {Kind: kind, WindowSamples: 1}} {
				rz := mustNew(t, cfg, l)
				for s := range uint64(3) {
					if o := walk(t, rz, l, s); !isPermutation(o, l.NumSequences()) {
						t.Fatalf("%s %+v sweep %d: %v", name, cfg, s, o)
					}
					checkSeekAgainstWalk(t, rz, l, s)
				}
			}
		}
	}
}

// Sweeps differ, seeds differ (cntk and window; none is file order).
func TestSweepsAndSeedsDiffer(t *testing.T) {
	l := uniformLayout(8, 8, 1) // 64 sequences: equal orders by chance are ~1/64!
	for _, kind := range []string{"cntk", "window"} {
		for _, cfg := range []Config{{Kind: kind}, {Kind: kind, WindowChunks: 2}, {Kind: kind, WindowSamples: 20}} {
			rz := mustNew(t, cfg, l)
			seen := map[string]uint64{}
			for s := range uint64(20) {
				key := fmt.Sprint(walk(t, rz, l, s))
				if prev, ok := seen[key]; ok {
					t.Fatalf("%+v: sweeps %d and %d have the same order", cfg, prev, s)
				}
				seen[key] = s
			}
			other := cfg
			other.Seed = 1
			if slices.Equal(walk(t, rz, l, 5), walk(t, mustNew(t, other, l), l, 5)) {
				t.Fatalf("%+v: seeds 0 and 1 give the same sweep 5", cfg)
			}
		}
	}
}

// Invariant 4: the same order whatever was computed before, from fresh or
// shared randomizers, in concurrent goroutines (run with -race).
func TestDeterminismConcurrent(t *testing.T) {
	l := randomLayout(rand.New(rand.NewPCG(3, 4)), 10, 30, true, true)
	for _, kind := range allKinds {
		cfg := Config{Kind: kind, Seed: 9, WindowChunks: 3}
		want := map[uint64][]int{}
		for s := range uint64(4) {
			want[s] = walk(t, mustNew(t, cfg, l), l, s)
		}
		shared := mustNew(t, cfg, l)
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for g := range 8 {
			wg.Go(func() {
				for i := range 12 {
					s := uint64((g + i) % 4)
					if got := walk(t, shared, l, s); !slices.Equal(got, want[s]) {
						errs <- fmt.Sprintf("%s sweep %d differs under concurrency", kind, s)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
	}
}

// Bad configurations are errors that name the setting.
func TestConfigErrors(t *testing.T) {
	l := uniformLayout(2, 2, 1)
	for _, cfg := range []Config{{Kind: "cntk", WindowChunks: -1}, {Kind: "window", WindowChunks: -5}, {Kind: "shuffle"}} {
		if _, err := New(cfg, l); err == nil {
			t.Fatalf("New(%+v) accepted", cfg)
		} else if got := err.Error(); got[:10] != "randomize:" {
			t.Fatalf("error without package prefix: %q", got)
		}
	}
	if _, err := New(Config{Kind: "window"}, &corpus.Layout{ChunkStart: []int{0}, Samples: []uint32{1}}); err == nil {
		t.Fatal("invalid layout accepted")
	}
}
