package source

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// prefetching is a test corpus that records the chunks a reader asks it to
// bring in ahead (corpus.Prefetcher) and the chunks it loads.
type prefetching struct {
	*testCorpus
	mu         sync.Mutex
	asked      map[int]bool
	loaded     map[int]bool
	askedFirst int // loads of a chunk asked for before
}

func (p *prefetching) Prefetch(c int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[c] = true
}

func (p *prefetching) LoadChunk(c int) (*corpus.Chunk, error) {
	p.mu.Lock()
	if p.asked[c] && !p.loaded[c] {
		p.askedFirst++
	}
	p.loaded[c] = true
	p.mu.Unlock()
	return p.testCorpus.LoadChunk(c)
}

// TestPrefetcherAskedForQueuedChunks: entering a window, the reader asks
// the corpus to bring in the window's chunks before it loads them, and
// what it delivers is what it delivers from a corpus without the hint.
func TestPrefetcherAskedForQueuedChunks(t *testing.T) {
	tc := makeCorpus(t, rand.New(rand.NewPCG(3, 4)), corpusOpts{n: 600, chunkSeq: 10})
	p := &prefetching{testCorpus: tc, asked: map[int]bool{}, loaded: map[int]bool{}}
	cfg := Config{Randomize: randomize.Config{Kind: "window", Seed: 5, WindowChunks: 8}, Prefetch: true, PrefetchChunks: 4}
	read := func(src corpus.Source) []Minibatch {
		s := mustNew(t, src, cfg)
		var out []Minibatch
		for range 40 {
			mb, err := s.NextK(25)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, cloneMB(mb))
		}
		return out
	}
	if !reflect.DeepEqual(read(p), read(tc)) {
		t.Fatal("the hint changed what was delivered")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.loaded) < 16 || p.askedFirst < len(p.loaded)/2 {
		t.Fatalf("%d chunks loaded, %d of them asked for ahead", len(p.loaded), p.askedFirst)
	}
}

// aheadHinting is prefetching that reads ahead only what it is told of
// (corpus.AheadHinter), as a file read around the page cache does; it
// counts the hints per chunk.
type aheadHinting struct {
	*prefetching
	hints map[int]int
}

func (a *aheadHinting) Prefetch(c int) {
	a.mu.Lock()
	a.hints[c]++
	a.mu.Unlock()
	a.prefetching.Prefetch(c)
}

func (a *aheadHinting) HintAhead() int { return 6 }

// TestFileOrderHintsAhead: in file order a corpus that reads ahead only
// what it is told of hears of every chunk in every sweep, before it is
// loaded; one that reads ahead by itself (the page cache's readahead)
// hears only of the few chunks a load queues at once; what is delivered
// does not change.
func TestFileOrderHintsAhead(t *testing.T) {
	tc := makeCorpus(t, rand.New(rand.NewPCG(5, 6)), corpusOpts{n: 600, chunkSeq: 10})
	cfg := Config{Randomize: randomize.Config{Kind: "none"}, Prefetch: true}
	sweep := func(src corpus.Source) []Minibatch {
		s := mustNew(t, src, cfg)
		var out []Minibatch
		for s.Epoch() < 2 {
			mb, err := s.NextK(25)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, cloneMB(mb))
		}
		return out
	}
	a := &aheadHinting{prefetching: &prefetching{testCorpus: tc, asked: map[int]bool{}, loaded: map[int]bool{}}, hints: map[int]int{}}
	if !reflect.DeepEqual(sweep(a), sweep(tc)) {
		t.Fatal("the hints changed what was delivered")
	}
	n := tc.Layout().NumChunks()
	for c := 1; c < n; c++ { // chunk 0 is loaded before any hint
		if a.hints[c] < 2 {
			t.Errorf("chunk %d hinted %d times in 2 sweeps", c, a.hints[c])
		}
	}
	if a.askedFirst < n-2 {
		t.Errorf("%d of %d chunks hinted before their first load", a.askedFirst, n)
	}
	p := &prefetching{testCorpus: tc, asked: map[int]bool{}, loaded: map[int]bool{}}
	sweep(p)
	if len(p.asked) > n/4 {
		t.Errorf("a corpus with a readahead of its own was hinted %d of %d chunks in file order", len(p.asked), n)
	}
}

// hintRecorder records the order of Prefetch calls on a gated corpus.
type hintRecorder struct {
	*gatedCorpus
	hmu   sync.Mutex
	hints []int
}

func (h *hintRecorder) Prefetch(c int) {
	h.hmu.Lock()
	defer h.hmu.Unlock()
	h.hints = append(h.hints, c)
}

// TestWantHintsAgainWhatItMovesAhead: chunks a prefetch queued and a
// minibatch then wants before their load started are hinted again, in the
// order wanted (a File read around the page cache reads such ranges
// first); chunks already loading are not.
func TestWantHintsAgainWhatItMovesAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tc := oneSampleCorpus(t, 400, 4)
	h := &hintRecorder{gatedCorpus: &gatedCorpus{Source: tc, gate: make(chan struct{})}}
	cc := newChunkCache(h, 32)
	cc.prefetch(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	for deadline := time.Now().Add(10 * time.Second); h.started.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the prefetch's loads did not start")
		}
	}
	cc.want([]int{7, 0, 3, 12}, nil, true)
	close(h.gate)
	cc.wg.Wait()
	h.hmu.Lock()
	defer h.hmu.Unlock()
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 7, 3, 12}; !reflect.DeepEqual(h.hints, want) {
		t.Fatalf("hints %v, want %v", h.hints, want)
	}
}

// TestParseAheadPlaces: file order from a corpus that reads ahead only
// what it is told of keeps ParseAhead more chunks parsed ahead; other
// corpora, other orders and reads without prefetching do not.
func TestParseAheadPlaces(t *testing.T) {
	tc := makeCorpus(t, rand.New(rand.NewPCG(7, 8)), corpusOpts{n: 600, chunkSeq: 10})
	hinting := &aheadHinting{prefetching: &prefetching{testCorpus: tc, asked: map[int]bool{}, loaded: map[int]bool{}}, hints: map[int]int{}}
	for _, c := range []struct {
		kind     string
		src      corpus.Source
		prefetch bool
		extra    int
	}{
		{"none", hinting, true, ParseAhead},
		{"none", hinting, false, 0},
		{"none", tc, true, 0},
		{"window", hinting, true, 0},
	} {
		cfg := Config{Randomize: randomize.Config{Kind: c.kind, WindowChunks: 8}, Prefetch: c.prefetch, PrefetchChunks: 4}
		s := mustNew(t, c.src, cfg)
		base := s.rnd.MaxResidentChunks() + 1 + s.windowPrefetch()
		if got := s.ResidentChunks(); got != base+c.extra {
			t.Errorf("%s order, %T, prefetch %v: %d resident chunks, want %d + %d", c.kind, c.src, c.prefetch, got, base, c.extra)
		}
		s.Close()
	}
}
