package source

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// recycling serves deep copies of a test corpus's chunks and, when one is
// recycled, overwrites it with garbage: a chunk still read after the cache
// recycled it shows as wrong data.
type recycling struct {
	*testCorpus
	mu       sync.Mutex
	recycled int
	spare    int // recycled chunks no load has taken yet
	peak     int // the most spare chunks at once
	reused   int // loads that took a spare chunk
}

func (r *recycling) LoadChunk(c int) (*corpus.Chunk, error) {
	r.mu.Lock()
	if r.spare > 0 {
		r.spare--
		r.reused++
	}
	r.mu.Unlock()
	ch, err := r.testCorpus.LoadChunk(c)
	if err != nil {
		return nil, err
	}
	out := &corpus.Chunk{First: ch.First, IDs: append([]string(nil), ch.IDs...), Bad: append([]error(nil), ch.Bad...)}
	for _, d := range ch.Streams {
		out.Streams = append(out.Streams, corpus.StreamData{
			SeqStart: append([]int32(nil), d.SeqStart...), Dense: append([]float32(nil), d.Dense...),
			RowStart: append([]int32(nil), d.RowStart...), Indices: append([]int32(nil), d.Indices...),
			Values: append([]float32(nil), d.Values...)})
	}
	return out, nil
}

func (r *recycling) Recycle(ch *corpus.Chunk) {
	r.mu.Lock()
	r.recycled++
	r.spare++
	r.peak = max(r.peak, r.spare)
	r.mu.Unlock()
	ch.First = -1
	for i := range ch.IDs {
		ch.IDs[i] = "recycled"
	}
	for i := range ch.Bad {
		ch.Bad[i] = nil
	}
	for s := range ch.Streams {
		d := &ch.Streams[s]
		for _, a := range [][]int32{d.SeqStart, d.RowStart, d.Indices} {
			for i := range a {
				a[i] = 1 << 30
			}
		}
		for _, a := range [][]float32{d.Dense, d.Values} {
			for i := range a {
				a[i] = -99
			}
		}
	}
}

// Invariant 9: the cache recycles only chunks nothing reads any more (its
// evicted ones), so with a corpus that overwrites recycled chunks every
// order, window, prefetch setting and cache size delivers what the plain
// corpus does (run with -race).
func TestRecycledChunksAreNotRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for trial := range 12 {
		tc := makeCorpus(t, rng, corpusOpts{n: 150, chunkSeq: 1 + rng.IntN(5), labels: true, bad: 4})
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.Schedule = ConstantSchedule(1 + rng.IntN(30))
			cfg.EpochSize = EpochInf
			n := 3 * int(tc.Layout().TotalSamples()) / 5 // about 3 sweeps and more
			want := readN(t, mustNew(t, tc, cfg), n)
			rc := &recycling{testCorpus: tc}
			s := mustNew(t, rc, cfg)
			if trial%3 == 0 {
				s.cache = newChunkCache(rc, 1+rng.IntN(3)) // tiny: evicts all the time
			}
			got := readN(t, s, n)
			s.Close()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d %s %+v: minibatches differ when evicted chunks are recycled", trial, kind, cfg.Randomize)
			}
			if rc.recycled == 0 && tc.Layout().NumChunks() > s.cache.cap {
				t.Fatalf("trial %d %s: nothing was recycled", trial, kind)
			}
		}
	}
}

// Invariant 9: every evicted chunk that had finished loading goes back to
// the corpus just before the load that replaces it (chunkCache.recycle),
// however many a window change evicts at once: the corpus never holds more
// spare chunks than there are loads in flight, so one that keeps only a
// few (ctf.Reader) still reuses nearly all of them.
func TestEveryEvictedChunkIsRecycled(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	tc := makeCorpus(t, rng, corpusOpts{n: 400, chunkSeq: 4})
	for _, kind := range kinds() {
		for _, prefetch := range []bool{false, true} {
			cfg := Config{Randomize: randomize.Config{Kind: kind, WindowChunks: 30}, Prefetch: prefetch,
				Schedule: ConstantSchedule(64), EpochSize: EpochInf}
			if prefetch {
				cfg.PrefetchChunks = 4
			}
			rc := &recycling{testCorpus: tc}
			s := mustNew(t, rc, cfg)
			readN(t, s, 2*int(tc.Layout().TotalSamples()))
			s.Close()
			evicted := s.ChunkLoads() - s.cache.resident()
			// A prefetched chunk evicted while still loading is left to the
			// collector. Loads in flight: a few fetches of up to GOMAXPROCS
			// workers each.
			if bound := 4 * runtime.GOMAXPROCS(0); rc.peak > bound {
				t.Errorf("%s prefetch=%v: %d recycled chunks waited at once for a load, want <= %d", kind, prefetch, rc.peak, bound)
			}
			if rc.reused < evicted*9/10 {
				t.Errorf("%s prefetch=%v: %d loads reused a chunk of %d evicted", kind, prefetch, rc.reused, evicted)
			}
		}
	}
}

// Invariant 9 for the entries want returns: in a minibatch that needs more
// chunks than the cache holds, loadAhead wants the first ones and the
// assembly evicts to make room for the rest, so a chunk it wanted may be
// evicted (and recycled into a later load) before one of its sequences
// comes up again. The assembly must then go through the cache, not use the
// entry want returned (chunkCache.getWanted): with a corpus that overwrites
// recycled chunks, the minibatches would differ.
func TestWantedEntryNotUsedAfterEviction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tc := makeCorpus(t, rng, corpusOpts{n: 200, chunkSeq: 3})
	plain := Config{Randomize: randomize.Config{Kind: "window", Seed: 3, WindowChunks: 20},
		Schedule: ConstantSchedule(40), EpochSize: EpochInf}
	want := readN(t, mustNew(t, tc, plain), 30)

	cfg := plain
	cfg.Prefetch = true
	rc := &recycling{testCorpus: tc}
	s := mustNew(t, rc, cfg)
	s.cache = newChunkCache(rc, 2) // far fewer chunks than a minibatch spans
	got := readN(t, s, 30)
	s.Close()
	if !reflect.DeepEqual(got, want) {
		t.Fatal("minibatches differ: an entry want returned was used after its chunk was evicted")
	}
	if rc.recycled == 0 {
		t.Fatal("nothing was recycled: the test does not evict")
	}
}

// The same in a cache the window prefetch keeps in order (chunkCache.ordered),
// whose wants move no chunk when all of an assembly's chunks are resident:
// a want that inserts still moves the resident ones to the front first, so
// the assembly's evictions never take a chunk it pinned (with a corpus that
// overwrites recycled chunks, the minibatches would differ), in caches of a
// window and more and in smaller ones.
func TestOrderedCacheKeepsPinnedChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 8 {
		tc := makeCorpus(t, rng, corpusOpts{n: 300, chunkSeq: 2 + rng.IntN(2)})
		plain := Config{Randomize: randomize.Config{Kind: "window", Seed: uint64(trial), WindowChunks: 2 + rng.IntN(3)},
			Schedule: ConstantSchedule(30 + rng.IntN(120)), EpochSize: EpochInf}
		want := readN(t, mustNew(t, tc, plain), 40)
		cfg := plain
		cfg.Prefetch, cfg.PrefetchChunks = true, 1+rng.IntN(2)
		rc := &recycling{testCorpus: tc}
		s := mustNew(t, rc, cfg)
		if !s.cache.ordered {
			t.Fatal("the window prefetch does not order the cache")
		}
		if trial%2 == 1 { // a cache smaller than a window, ordered all the same
			s.cache = newChunkCache(rc, 2+rng.IntN(3))
			s.cache.ordered = true
		}
		got := readN(t, s, 40)
		s.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: minibatches differ: a pinned chunk was evicted and recycled", trial)
		}
		if rc.recycled == 0 || s.gather.maxPins < s.cache.cap {
			t.Fatalf("trial %d: %d recycled, at most %d pins of %d places: the test does not evict under an assembly", trial, rc.recycled, s.gather.maxPins, s.cache.cap)
		}
	}
}
