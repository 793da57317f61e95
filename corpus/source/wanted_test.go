package source

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/corpus/randomize"
)

// A minibatch that needs more chunks than the cache holds: loadAhead wants
// the first ones, and the assembly evicts to make room for the rest, so a
// chunk it wanted may be evicted (and recycled into a later load) before
// one of its sequences comes up again. The assembly must then go through
// the cache, not use the entry want returned (chunkCache.getWanted): with a
// corpus that overwrites recycled chunks, the minibatches would differ.
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
