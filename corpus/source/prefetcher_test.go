package source

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

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
