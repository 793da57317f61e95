package source

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// TestCacheBounded checks invariant 9's memory bound: the cache never holds
// more than MaxResidentChunks()+1 chunks, plus PrefetchChunks for the window
// randomizer's next window, and walking several sweeps of a
// corpus with many chunks works within it.
func TestCacheBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tc := makeCorpus(t, rng, corpusOpts{n: 200, chunkSeq: 2})
	for _, kind := range kinds() {
		cfg := Config{EpochSize: EpochInf, Prefetch: true, PrefetchChunks: 3}
		cfg.Randomize = randomConfig(rng, kind).Randomize
		s := mustNew(t, tc, cfg)
		places := 0 // for the next window's chunks, at most a window's
		if kind == "window" {
			places = min(3, s.rnd.MaxResidentChunks())
		}
		for s.Position() < 3*tc.Layout().TotalSamples() {
			mb, err := s.NextK(1 + rng.IntN(30))
			if err != nil {
				t.Fatal(err)
			}
			checkData(t, tc, mb)
			if n := s.cache.resident(); n > s.cache.cap {
				t.Fatalf("%s: %d chunks resident, cap %d", kind, n, s.cache.cap)
			}
		}
		if want := s.rnd.MaxResidentChunks() + 1 + places; s.cache.cap != want || s.ResidentChunks() != want {
			t.Errorf("%s: cap %d, want %d", kind, s.cache.cap, want)
		}
	}
}

// A prefetch deeper than a window keeps no more places than a window holds:
// a 2-chunk window with read's default of 64 would otherwise keep 64 older
// chunks resident.
func TestPrefetchPlacesAtMostAWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tc := makeCorpus(t, rng, corpusOpts{n: 300, chunkSeq: 3})
	for _, w := range []int{1, 2, 5} {
		cfg := Config{EpochSize: EpochInf, Prefetch: true, PrefetchChunks: 64,
			Randomize: randomize.Config{Kind: "window", WindowChunks: w}, Schedule: ConstantSchedule(20)}
		s := mustNew(t, tc, cfg)
		mr := s.rnd.MaxResidentChunks()
		if want := mr + 1 + mr; s.ResidentChunks() != want {
			t.Errorf("window %d: %d cache places, want %d", w, s.ResidentChunks(), want)
		}
		readN(t, s, 2*int(tc.Layout().TotalSamples())/20)
		s.Close()
		if n := s.cache.resident(); n > 2*mr+1 {
			t.Errorf("window %d: %d chunks resident", w, n)
		}
	}
}

// TestPrefetchDoesNotChangeResults checks invariant 9: the same run with and
// without prefetch, and with a tiny cache, delivers identical minibatches
// (run with -race).
func TestPrefetchDoesNotChangeResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	tc := makeCorpus(t, rng, corpusOpts{n: 80, chunkSeq: 3, labels: true, bad: 3})
	for _, kind := range kinds() {
		cfg := randomConfig(rng, kind)
		cfg.EpochSize = 17
		cfg.Schedule = ConstantSchedule(9)
		cfg.Prefetch = false
		plain := mustNew(t, tc, cfg)
		cfg.Prefetch = true
		pre := mustNew(t, tc, cfg)
		tiny := mustNew(t, tc, cfg)
		tiny.cache = newChunkCache(tc, 1)
		a, b, c := readN(t, plain, 60), readN(t, pre, 60), readN(t, tiny, 60)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
			t.Fatalf("%s: prefetch or cache size changed the minibatches", kind)
		}
	}
}

// TestLoadAheadKeepsWhatItNeeds: with prefetch, a minibatch's chunks load in
// parallel (chunkCache.want) without evicting one another, and file order's
// lookahead loads the next chunk early without evicting the current one, so
// a read in windows or in file order loads every chunk once per sweep, the
// same count as without prefetch, and never holds more than the cache's
// capacity.
func TestLoadAheadKeepsWhatItNeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for trial := range 30 {
		// The last trials have larger windows read in small minibatches,
		// many to a window: the reader's gets reorder the cache between
		// the window prefetches that follow each minibatch.
		large := trial >= 20
		chunkSeq, window, maxK := 1+rng.IntN(6), 1+rng.IntN(4), 40
		if large {
			chunkSeq, window, maxK = 4+rng.IntN(5), 6+rng.IntN(7), 30
		}
		tc := makeCorpus(t, rng, corpusOpts{n: 300, chunkSeq: chunkSeq})
		nc := tc.Layout().NumChunks()
		// Cut at sweep ends, so that the read stops exactly after the last
		// sweep.
		cfg := Config{EpochSize: EpochInf, Prefetch: true, CutAtSweep: true}
		cfg.Randomize.Kind = "window"
		if trial%2 == 1 && !large { // file order: with the next-chunk lookahead
			cfg.Randomize.Kind = "none"
		}
		cfg.Randomize.WindowChunks = window
		// The next window's chunks, prefetched, are each loaded once too.
		cfg.PrefetchChunks = rng.IntN(5)
		if large {
			cfg.PrefetchChunks = 1 + rng.IntN(3)
		}
		s := mustNew(t, tc, cfg)
		const sweeps = 3
		M := tc.Layout().TotalSamples()
		for s.Position() < sweeps*M {
			k := 1 + rng.IntN(maxK)
			if _, err := s.NextK(k); err != nil {
				t.Fatal(err)
			}
			if n := s.cache.resident(); n > s.cache.cap {
				t.Fatalf("trial %d: %d chunks resident, cap %d", trial, n, s.cache.cap)
			}
		}
		s.Close() // waits for the prefetch goroutines
		// The prefetch after the last minibatch loads the first chunk of the
		// next sweep (in file order, the first cache-capacity chunks): each
		// chunk at most sweeps+1 times, that many extra loads. A
		// chunk in the last window of one sweep and the first of the next
		// may stay resident across the sweep end, hence fewer loads.
		total := 0
		for c := range nc {
			n := int(tc.Loads(c))
			if n < 1 || n > sweeps+1 {
				t.Fatalf("trial %d (%s, window %d, %d chunks): chunk %d loaded %d times in %d sweeps",
					trial, cfg.Randomize.Kind, cfg.Randomize.WindowChunks, nc, c, n, sweeps)
			}
			total += n
		}
		extraOK := 1
		if cfg.Randomize.Kind == "none" || cfg.PrefetchChunks > 0 {
			// After the last minibatch, file order's lookahead and the
			// window prefetch (the next sweep's first window, and part of
			// its second) load up to a cache's worth ahead.
			extraOK = s.cache.cap
		}
		if extra := total - sweeps*nc; extra > extraOK {
			t.Fatalf("trial %d (%s, window %d, prefetch %d, %d chunks): %d loads beyond one per chunk and sweep", trial, cfg.Randomize.Kind, cfg.Randomize.WindowChunks, cfg.PrefetchChunks, nc, extra)
		}
	}
}

// TestFileOrderLooksAhead: in file order with prefetch, the next chunk is
// loading while the caller is still inside the current one; without
// prefetch it is not touched before it is needed.
func TestFileOrderLooksAhead(t *testing.T) {
	tc := oneSampleCorpus(t, 40, 10) // chunks of 10 sequences
	for _, prefetch := range []bool{false, true} {
		cfg := Config{EpochSize: EpochInf, Prefetch: prefetch}
		cfg.Randomize.Kind = "none"
		s := mustNew(t, tc, cfg)
		if _, err := s.NextK(3); err != nil { // sequences 0..2, chunk 0
			t.Fatal(err)
		}
		s.cache.wg.Wait() // the prefetch, not dropped as Close would
		s.cache.mu.Lock()
		ahead := s.cache.slots[1] != nil
		s.cache.mu.Unlock()
		if ahead != prefetch {
			t.Errorf("prefetch %v: chunk 1 resident after the first minibatch: %v", prefetch, ahead)
		}
	}
}

// countingCorpus records the most LoadChunk calls in flight at once.
type countingCorpus struct {
	corpus.Source
	mu            sync.Mutex
	inFlight, max int
}

func (c *countingCorpus) LoadChunk(i int) (*corpus.Chunk, error) {
	c.mu.Lock()
	c.inFlight++
	c.max = max(c.max, c.inFlight)
	c.mu.Unlock()
	time.Sleep(200 * time.Microsecond) // let concurrent loads overlap
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	return c.Source.LoadChunk(i)
}

// TestLoadAheadBoundedParallelism: entering a window of many chunks loads
// them with at most GOMAXPROCS workers (plus a get that loads a queued
// chunk itself), not one goroutine per chunk: each load in flight holds a
// chunk-sized buffer. And loads do overlap, in file order too, where each
// minibatch queues about one new chunk.
func TestLoadAheadBoundedParallelism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tc := oneSampleCorpus(t, 400, 4) // 100 chunks
	for _, kind := range []string{"window", "none"} {
		cc := &countingCorpus{Source: tc}
		cfg := Config{EpochSize: EpochInf, Prefetch: true}
		cfg.Randomize.Kind = kind
		cfg.Randomize.WindowChunks = 32
		s := mustNew(t, cc, cfg)
		for s.Position() < 2*tc.Layout().TotalSamples() {
			if _, err := s.NextK(200); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if cc.max > 3 {
			t.Fatalf("%s: %d chunk loads in flight at once with GOMAXPROCS 2", kind, cc.max)
		}
		if cc.max < 2 {
			t.Fatalf("%s: chunk loads never overlapped (at most %d in flight)", kind, cc.max)
		}
	}
}

// A chunk queued while every worker is busy starts another worker, up to
// one per processor: in file order each minibatch queues about one chunk,
// and they must still load two at a time on two processors.
func TestQueuedChunkStartsWorker(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tc := oneSampleCorpus(t, 400, 4)
	g := &gatedCorpus{Source: tc, gate: make(chan struct{})}
	cc := newChunkCache(g, 64)
	defer func() { close(g.gate); cc.wg.Wait() }()
	wait := func(n int32) {
		for deadline := time.Now().Add(10 * time.Second); g.started.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d loads started, want %d: a queued chunk waits for a busy worker", g.started.Load(), n)
			}
		}
	}
	cc.prefetch(0)
	wait(1) // its worker is inside the load
	cc.prefetch(1)
	wait(2)
	cc.prefetch(2)
	time.Sleep(10 * time.Millisecond)
	if n := g.started.Load(); n != 2 {
		t.Fatalf("%d loads in flight with GOMAXPROCS 2", n)
	}
}

// What a minibatch wants loads before what a prefetch queued earlier: with
// both workers busy and a prefetch of 20 chunks queued, chunks 15 and 40
// wanted now are the next to load. Loads are let go one at a time, so the
// order is exact.
func TestWantGoesBeforePrefetch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tc := oneSampleCorpus(t, 400, 4) // 100 chunks
	g := &gatedCorpus{Source: tc, gate: make(chan struct{})}
	cc := newChunkCache(g, 64)
	list := make([]int, 20)
	for i := range list {
		list[i] = i
	}
	cc.prefetch(list...)
	waitStarted := func(n int32) {
		for g.started.Load() < n {
			time.Sleep(time.Millisecond)
		}
	}
	waitStarted(2)
	cc.want([]int{15, 40}, nil, true)
	for n := int32(3); n <= 4; n++ {
		g.gate <- struct{}{} // one load finishes; its worker takes the next
		waitStarted(n)
	}
	close(g.gate)
	cc.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.order) != 21 {
		t.Fatalf("%d loads, want 21 (each chunk once): %v", len(g.order), g.order)
	}
	if g.order[2] != 15 || g.order[3] != 40 {
		t.Fatalf("load order %v: want 15 and 40 right after the two in flight", g.order)
	}
}

// flakyCorpus fails the first load of one chunk.
type flakyCorpus struct {
	corpus.Source
	mu     sync.Mutex
	failOn int
	failed bool
}

func (f *flakyCorpus) LoadChunk(c int) (*corpus.Chunk, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c == f.failOn && !f.failed {
		f.failed = true
		return nil, errors.New("disk on fire")
	}
	return f.Source.LoadChunk(c)
}

// TestLoadErrorIsStickyAndRecoverable: a chunk that cannot be read fails
// Next with the cause, leaves State at the last good minibatch, and a
// Restore of that state resumes exactly.
func TestLoadErrorIsStickyAndRecoverable(t *testing.T) {
	for _, prefetch := range []bool{false, true} {
		t.Run(fmt.Sprintf("prefetch=%v", prefetch), func(t *testing.T) { testLoadError(t, prefetch) })
	}
}

func testLoadError(t *testing.T, prefetch bool) {
	tc := oneSampleCorpus(t, 20, 4)
	cfg := Config{EpochSize: EpochInf, Schedule: ConstantSchedule(3), Prefetch: prefetch}
	cfg.Randomize.Kind = "none"
	want := readN(t, mustNew(t, tc, cfg), 6)
	s := mustNew(t, &flakyCorpus{Source: tc, failOn: 2}, cfg)
	got := readN(t, s, 2) // samples 0..5: chunks 0, 1
	_, err := s.Next()    // needs chunk 1 then 2
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "chunk 2") {
		t.Fatalf("Next: %v", err)
	}
	if _, err2 := s.Next(); err2 != err {
		t.Errorf("error is not sticky: %v", err2)
	}
	st := s.State()
	if st.Position != 6 || st.Step != 2 {
		t.Fatalf("state after failure %+v", st)
	}
	if err := s.Restore(st); err != nil {
		t.Fatal(err)
	}
	got = append(got, readN(t, s, 4)...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after recovery the minibatches differ")
	}
}

// gatedCorpus counts LoadChunk calls, records their order and holds each
// until gate is closed.
type gatedCorpus struct {
	corpus.Source
	gate    chan struct{}
	started atomic.Int32
	mu      sync.Mutex
	order   []int
}

func (g *gatedCorpus) LoadChunk(i int) (*corpus.Chunk, error) {
	g.mu.Lock()
	g.order = append(g.order, i)
	g.mu.Unlock()
	g.started.Add(1)
	<-g.gate
	return g.Source.LoadChunk(i)
}

// stopPrefetch lets the loads in flight finish and drops the others: they
// leave the cache, and a later get loads them itself.
func TestStopPrefetchDropsUnstartedLoads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tc := oneSampleCorpus(t, 400, 4) // 100 chunks
	g := &gatedCorpus{Source: tc, gate: make(chan struct{})}
	cc := newChunkCache(g, 32)
	list := make([]int, 16)
	for i := range list {
		list[i] = i
	}
	cc.prefetch(list...)
	for g.started.Load() < 2 { // both workers are inside a load
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { cc.stopPrefetch(); close(stopped) }()
	for !cc.stop.Load() {
		time.Sleep(time.Millisecond)
	}
	close(g.gate)
	<-stopped
	if n := g.started.Load(); n != 2 {
		t.Fatalf("%d loads started, want the 2 in flight when prefetch stopped", n)
	}
	if n, loads := cc.resident(), cc.loads; n != 2 || loads != 2 {
		t.Fatalf("resident %d, loads %d after the stop: want 2 and 2", n, loads)
	}
	for _, c := range list {
		ch, _, err := cc.get(c)
		if err != nil {
			t.Fatalf("get(%d) after the stop: %v", c, err)
		}
		want, _ := tc.LoadChunk(c)
		if !reflect.DeepEqual(ch.IDs, want.IDs) {
			t.Fatalf("get(%d) after the stop: ids %v, want %v", c, ch.IDs, want.IDs)
		}
	}
	if n := g.started.Load(); n != 16 {
		t.Fatalf("%d loads in all, want each of the 16 chunks once", n)
	}
}

// Close drops prefetches but leaves the Source usable: with Close calls
// between random minibatches, it delivers what an uninterrupted Source does.
func TestCloseBetweenMinibatchesChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 29))
	tc := makeCorpus(t, rng, corpusOpts{n: 400, chunkSeq: 4})
	for _, kind := range kinds() {
		cfg := Config{Randomize: randomize.Config{Kind: kind, WindowChunks: 8}, Prefetch: true, PrefetchChunks: 8,
			Schedule: ConstantSchedule(16), EpochSize: EpochInf}
		n := 3 * int(tc.Layout().TotalSamples()) / 16
		want := readN(t, mustNew(t, tc, cfg), n)
		s := mustNew(t, tc, cfg)
		for i := 0; i < n; i++ {
			if rng.IntN(3) == 0 {
				s.Close()
			}
			mb, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cloneMB(mb), want[i]) {
				t.Fatalf("%s: minibatch %d differs after Close calls", kind, i)
			}
		}
	}
}
