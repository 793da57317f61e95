package randomize

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
)

// checkVisits compares Visits(s, c) for every chunk with the order in
// which a walk of sweep s meets that chunk's sequences.
func checkVisits(t testing.TB, rz Randomizer, l *corpus.Layout, s uint64) {
	t.Helper()
	vo, ok := rz.(VisitOrder)
	if !ok {
		return
	}
	want := make([][]int32, l.NumChunks())
	for _, q := range walk(t, rz, l, s) {
		c := l.ChunkOf(q)
		first, _ := l.Chunk(c)
		want[c] = append(want[c], int32(q-first))
	}
	for c := range want {
		if c%2 == 0 {
			vo.PrepareVisits(s, c) // half the chunks' windows started in the background
		}
	}
	for c := range want {
		if c%2 == 0 {
			deadline := time.Now().Add(10 * time.Second)
			for !vo.PrepareVisits(s, c) {
				if time.Now().After(deadline) {
					t.Fatalf("sweep %d chunk %d: the order is never ready", s, c)
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	for c := range want {
		if got := vo.Visits(s, c); !slices.Equal(got, want[c]) {
			t.Fatalf("sweep %d chunk %d: Visits %v, the walk visits %v", s, c, got, want[c])
		}
	}
	if got := vo.Visits(s, l.NumChunks()); got != nil {
		t.Fatalf("Visits of a chunk past the last: %v", got)
	}
}

// VisitOrder for window: each chunk's sequences in the order the sweep's
// walk meets them, for chunk and sample windows, across more sweeps and
// windows than the randomizer keeps, asked in a random order of sweeps.
func TestWindowVisits(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for trial := range 300 {
		l := randomLayout(r, 14, 7, trial%2 == 0, false)
		rz := mustNew(t, randomConfig(r, "window"), l)
		for _, s := range []uint64{0, 1, 0, 7, 1 << 40, 2, 1} {
			checkVisits(t, rz, l, s)
		}
	}
	if _, ok := mustNew(t, Config{Kind: "cntk"}, uniformLayout(3, 2, 1)).(VisitOrder); ok {
		t.Error("cntk implements VisitOrder; it is not tested here")
	}
}

// Visits from many goroutines at once (under -race) gives what it gives
// alone: a window's order is computed once and shared.
func TestWindowVisitsConcurrent(t *testing.T) {
	l := uniformLayout(40, 25, 2)
	cfg := Config{Kind: "window", Seed: 5, WindowChunks: 6}
	alone := mustNew(t, cfg, l).(VisitOrder)
	shared := mustNew(t, cfg, l).(VisitOrder)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				s, c := r.Uint64N(3), r.IntN(40)
				if r.IntN(3) == 0 {
					shared.PrepareVisits(s, r.IntN(40))
				}
				if got := shared.Visits(s, c); !slices.Equal(got, alone.Visits(s, c)) {
					errs <- "concurrent Visits differs"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// A window cursor that finds its window's order computed (VisitOrder)
// reads it instead of shuffling: every walk and every Seek yields what a
// randomizer that never computed an order yields, whichever windows were
// computed. Without the computed path exercised (no cursor read one) the
// test fails, so it cannot pass vacuously.
func TestWindowCursorReadsComputedOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	read := 0
	for trial := range 200 {
		l := randomLayout(r, 14, 7, trial%2 == 0, trial%3 == 0)
		cfg := randomConfig(r, "window")
		fresh, computed := mustNew(t, cfg, l), mustNew(t, cfg, l)
		vo := computed.(VisitOrder)
		for _, s := range []uint64{0, 1, 1 << 40} {
			for c := range l.NumChunks() {
				if r.IntN(2) == 0 {
					vo.Visits(s, c) // computes c's window, waiting for it
				}
			}
			if got, want := walk(t, computed, l, s), walk(t, fresh, l, s); !slices.Equal(got, want) {
				t.Fatalf("trial %d sweep %d: walk %v with computed orders, %v without", trial, s, got, want)
			}
			total := l.TotalSamples()
			for range 4 {
				off := r.Uint64N(total + 1)
				cg, atg := computed.Sweep(s).Seek(off)
				cw, atw := fresh.Sweep(s).Seek(off)
				if wc, ok := cg.(*windowCursor); ok && wc.shuffled {
					read++
				}
				if got, want := drain(t, cg, l.NumSequences()), drain(t, cw, l.NumSequences()); atg != atw || !slices.Equal(got, want) {
					t.Fatalf("trial %d sweep %d Seek(%d): at %d %v with computed orders, at %d %v without", trial, s, off, atg, got, atw, want)
				}
			}
		}
	}
	if read == 0 {
		t.Fatal("no cursor read a computed order")
	}
}

// With ShareVisits, a window cursor reads every window's order from the
// visit orders, computing the ones not computed yet: walks and Seeks yield
// what a fresh randomizer's do, and NextRanked gives each sequence its
// place among its chunk's visits. A cursor that shuffles on its own gives
// no ranks (-1).
func TestSharedVisitsRankSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for trial := range 200 {
		l := randomLayout(r, 14, 7, trial%2 == 0, trial%3 == 0)
		cfg := randomConfig(r, "window")
		fresh, shared := mustNew(t, cfg, l), mustNew(t, cfg, l)
		shared.(SharedVisits).ShareVisits()
		vo := shared.(VisitOrder)
		for _, s := range []uint64{0, 1, 1 << 40} {
			if got, want := walk(t, shared, l, s), walk(t, fresh, l, s); !slices.Equal(got, want) {
				t.Fatalf("trial %d sweep %d: walk %v with shared orders, %v without", trial, s, got, want)
			}
			off := r.Uint64N(l.TotalSamples() + 1)
			cs, ats := shared.Sweep(s).Seek(off)
			cf, atf := fresh.Sweep(s).Seek(off)
			n := l.NumSequences()
			ords, ranks := make([]int, n), make([]int32, n)
			got := cs.(RankedCursor).NextRanked(ords, ranks)
			fords, franks := make([]int, n), make([]int32, n)
			fgot := cf.(RankedCursor).NextRanked(fords, franks)
			if ats != atf || !slices.Equal(ords[:got], fords[:fgot]) {
				t.Fatalf("trial %d sweep %d Seek(%d): at %d %v shared, at %d %v fresh", trial, s, off, ats, ords[:got], atf, fords[:fgot])
			}
			for i, q := range ords[:got] {
				c := l.ChunkOf(q)
				first, _ := l.Chunk(c)
				if want := int32(slices.Index(vo.Visits(s, c), int32(q-first))); ranks[i] != want {
					t.Fatalf("trial %d sweep %d: sequence %d ranked %d, its place in the visits %d", trial, s, q, ranks[i], want)
				}
				if franks[i] != -1 {
					t.Fatalf("trial %d sweep %d: a cursor shuffling on its own ranks sequence %d at %d", trial, s, q, franks[i])
				}
			}
		}
	}
}
