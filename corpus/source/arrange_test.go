package source

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// oneHotChunk is a chunk whose sparse stream has one entry of value 1 per
// sample, held in corpus's shared arrays, as ctf parses one-hot inputs.
func oneHotChunk(rng *rand.Rand, first, n int) *corpus.Chunk {
	ch := &corpus.Chunk{First: first}
	d := corpus.StreamData{SeqStart: []int32{0}}
	for i := range n {
		ch.IDs = append(ch.IDs, "h"+string(rune('a'+i%26)))
		for range rng.IntN(4) {
			d.Indices = append(d.Indices, int32(rng.IntN(1000)))
		}
		d.SeqStart = append(d.SeqStart, int32(len(d.Indices)))
	}
	d.RowStart = corpus.Iota(len(d.Indices) + 1)
	d.Values = corpus.Ones(len(d.Indices))
	ch.Streams = []corpus.StreamData{d}
	return ch
}

// clone copies a (possibly nil or empty) array, keeping nil nil.
func clone[T any](a []T) []T {
	if a == nil {
		return nil
	}
	return append(make([]T, 0, len(a)), a...)
}

// deepCopy copies a chunk's arrays (the shared ones stay shared).
func deepCopy(ch *corpus.Chunk) *corpus.Chunk {
	out := &corpus.Chunk{First: ch.First, IDs: clone(ch.IDs), Bad: clone(ch.Bad)}
	for _, d := range ch.Streams {
		c := corpus.StreamData{SeqStart: clone(d.SeqStart), Indices: clone(d.Indices), Dense: clone(d.Dense)}
		c.RowStart, c.Values = d.RowStart, d.Values
		if !corpus.SharedIota(d.RowStart) {
			c.RowStart = clone(d.RowStart)
		}
		if !corpus.SharedOnes(d.Values) {
			c.Values = clone(d.Values)
		}
		out.Streams = append(out.Streams, c)
	}
	return out
}

// arrange lays a chunk out in any order without changing any sequence:
// arranged sequence k is, in every stream, the chunk's sequence order[k],
// with its id and parse error; pos is the inverse of order; the chunk
// arranged from is not modified; one-hot streams keep corpus's shared
// arrays, which are never written. The destination is the previous
// arrangement, of another chunk and size, so arrays too short, long
// enough, and shared in the destination are all met.
func TestArrange(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	iota0 := append([]int32(nil), corpus.Iota(4096)...)
	var dst *corpus.Chunk
	var pos []int32
	for trial := range 200 {
		var src *corpus.Chunk
		var streams []corpus.Stream
		if trial%3 == 2 {
			src = oneHotChunk(rng, rng.IntN(100), rng.IntN(40))
			streams = []corpus.Stream{{Name: "w", Dim: 1000, Sparse: true}}
		} else {
			tc := mixedCorpus(t, rng, 5+rng.IntN(60), 1+rng.IntN(30))
			c := rng.IntN(tc.Layout().NumChunks())
			var err error
			if src, err = tc.LoadChunk(c); err != nil {
				t.Fatal(err)
			}
			streams = tc.Streams()
		}
		before := deepCopy(src)
		order := make([]int32, src.Len())
		for k := range order {
			order[k] = int32(k)
		}
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		dst, pos = arrange(dst, src, order, pos)
		if !reflect.DeepEqual(src, before) {
			t.Fatalf("trial %d: arrange modified the chunk it read", trial)
		}
		if dst.First != src.First || dst.Len() != src.Len() || len(pos) != src.Len() {
			t.Fatalf("trial %d: arranged First %d Len %d pos %d, want %d %d", trial, dst.First, dst.Len(), len(pos), src.First, src.Len())
		}
		for k, i := range order {
			if pos[i] != int32(k) {
				t.Fatalf("trial %d: pos[%d] = %d, want %d", trial, i, pos[i], k)
			}
			var got, want Minibatch
			got.reset(streams)
			want.reset(streams)
			got.appendSequence(dst, k)
			want.appendSequence(src, int(i))
			got.Sequences, want.Sequences = nil, nil // First+k names the layout's place, not the sequence
			if !reflect.DeepEqual(cloneMB(&got), cloneMB(&want)) {
				t.Fatalf("trial %d: arranged sequence %d is not sequence %d\ngot  %+v\nwant %+v", trial, k, i, got, want)
			}
			if dst.BadAt(k) != src.BadAt(int(i)) {
				t.Fatalf("trial %d: arranged sequence %d has error %v, sequence %d %v", trial, k, dst.BadAt(k), i, src.BadAt(int(i)))
			}
		}
		for s, d := range src.Streams {
			a := dst.Streams[s]
			if corpus.SharedIota(d.RowStart) != corpus.SharedIota(a.RowStart) || corpus.SharedOnes(d.Values) != corpus.SharedOnes(a.Values) {
				t.Fatalf("trial %d stream %d: shared arrays not kept shared", trial, s)
			}
			if (d.Dense == nil) != (a.Dense == nil) || (d.RowStart == nil) != (a.RowStart == nil) {
				t.Fatalf("trial %d stream %d: dense/sparse arrays not as in the chunk", trial, s)
			}
		}
	}
	if !reflect.DeepEqual(corpus.Iota(4096), iota0) {
		t.Fatal("corpus.Iota was written")
	}
	for _, v := range corpus.Ones(4096) {
		if v != 1 {
			t.Fatal("corpus.Ones was written")
		}
	}
}

// Arranged chunks change nothing a reader delivers: window reads with
// chunks arranged and in file layout give the same minibatches, for any
// window, prefetch, number of ranks, minibatch size and starting position,
// over several sweeps (chunks resident across a sweep boundary are read
// in an order they were not arranged for), with bad sequences and a
// corpus that overwrites recycled chunks.
func TestArrangedReadIsFileLayoutRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	arranged := 0
	for trial := range 40 {
		tc := makeCorpus(t, rng, corpusOpts{n: 60 + rng.IntN(200), chunkSeq: 1 + rng.IntN(8), labels: trial%2 == 0, bad: rng.IntN(4)})
		cfg := randomConfig(rng, "window")
		cfg.Schedule = ConstantSchedule(1 + rng.IntN(40))
		cfg.EpochSize = EpochInf
		cfg.Prefetch = rng.IntN(2) == 0
		if cfg.Prefetch {
			cfg.PrefetchChunks = rng.IntN(4)
		}
		if trial%4 == 3 {
			cfg.Workers = 2 + rng.IntN(2)
			cfg.Rank = rng.IntN(cfg.Workers)
		}
		start := rng.Uint64N(2 * tc.Layout().TotalSamples())
		n := 3 * int(tc.Layout().TotalSamples()) / max(cfg.Schedule.At(0), 1)
		// Half the trials as a reader runs (a chunk whose order is not
		// ready keeps its layout), half with every small chunk arranged.
		wait := trial%2 == 0
		read := func(fileLayout bool) ([]Minibatch, int) {
			c := cfg
			c.fileLayout, c.waitVisits = fileLayout, wait
			s := mustNew(t, &recycling{testCorpus: tc}, c)
			if err := s.Seek(start); err != nil {
				t.Fatal(err)
			}
			mbs := readN(t, s, n)
			s.Close()
			return mbs, int(s.cache.arranged.Load())
		}
		want, none := read(true)
		got, k := read(false)
		if none != 0 {
			t.Fatalf("trial %d: %d chunks arranged in file layout", trial, none)
		}
		if wait {
			arranged += k
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d %+v: arranged chunks deliver other minibatches", trial, cfg)
		}
	}
	if arranged == 0 {
		t.Fatal("no chunk was arranged")
	}
}

// A CTF corpus arranges its chunks as it parses them
// (corpus.ArrangingSource): every chunk a one-worker read loads while
// waiting for its orders is arranged by the parse, none parsed in file
// layout and arranged after, and the minibatches, with their bad
// sequences, are those of a file-layout read, with ranks, seeks, several
// sweeps and a corpus of one chunk.
func TestArrangedCTFReadIsFileLayoutRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	for trial := range 12 {
		path, nbad := writeBadCTF(t, rng, 200+rng.IntN(300))
		cfg := randomConfig(rng, "window")
		cfg.Schedule = ConstantSchedule(1 + rng.IntN(40))
		cfg.EpochSize = EpochInf
		cfg.Prefetch, cfg.PrefetchChunks = true, rng.IntN(5)
		if trial%3 == 2 {
			cfg.Workers = 2
			cfg.Rank = rng.IntN(2)
		}
		chunkBytes := int64(256 + rng.IntN(4096))
		if trial == 0 {
			chunkBytes = 1 << 30 // one chunk
		}
		var start uint64
		read := func(fileLayout bool) ([]Minibatch, *Source) {
			r, err := ctf.Open(path, ctf.Config{Streams: budgetStreams, ChunkBytes: chunkBytes, MaxErrors: nbad})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c := cfg
			c.fileLayout, c.waitVisits = fileLayout, true
			s := mustNew(t, r, c)
			if start == 0 {
				start = 1 + rng.Uint64N(2*r.Layout().TotalSamples())
			}
			if err := s.Seek(start); err != nil {
				t.Fatal(err)
			}
			mbs := readN(t, s, 3*int(r.Layout().TotalSamples())/cfg.Schedule.At(0))
			s.Close()
			return mbs, s
		}
		want, _ := read(true)
		got, s := read(false)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d %+v: chunks arranged by the parse deliver other minibatches", trial, cfg)
		}
		a, byParse := s.cache.arranged.Load(), s.cache.parseArranged.Load()
		if loads := s.ChunkLoads(); cfg.Workers < 2 && (int(byParse) != loads || a != byParse) {
			t.Errorf("trial %d: %d of %d loads arranged by the parse, %d in all", trial, byParse, loads, a)
		}
	}
}

// A reader that follows the order its chunks were arranged for finds every
// sequence at its rank (from the window cursor) or at the next place of its
// chunk, never through pos: one worker reading whole sweeps from a sweep's
// start (the second sweep's first window is arranged for it, not for the
// sweep its first minibatch began in). This is what makes the arrangement
// pay; it changes no result.
func TestArrangedReadFollowsTheOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	tc := makeCorpus(t, rng, corpusOpts{n: 400, chunkSeq: 10})
	M := tc.Layout().TotalSamples()
	for _, prefetch := range []int{0, 2} {
		for _, from := range []uint64{0, M} {
			cfg := Config{Randomize: randomize.Config{Kind: "window", WindowChunks: 4, Seed: 3},
				Schedule: ConstantSchedule(17), EpochSize: EpochInf, CutAtSweep: true,
				Prefetch: prefetch > 0, PrefetchChunks: prefetch, waitVisits: true}
			s := mustNew(t, tc, cfg)
			if err := s.Seek(from); err != nil {
				t.Fatal(err)
			}
			for s.Position() < from+2*M {
				if _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			finds, slow := 0, 0
			for _, e := range s.cache.slots {
				if e == nil || e.arr == nil {
					continue
				}
				finds += int(e.arr.next)
				slow += int(e.arr.slow)
			}
			if s.gather.ranked == 0 || slow != 0 {
				t.Errorf("prefetch %d from %d: %d of the resident chunks' sequences found through pos (%d at their rank, %d at next)", prefetch, from, slow, s.gather.ranked, finds)
			}
		}
	}
}

// A chunk larger than warmLimit keeps its file layout (an arrangement
// would hold it twice while it is made); the small ones of the same read
// are arranged, and both deliver what file layout does.
func TestLargeChunksKeepTheirLayout(t *testing.T) {
	streams := []corpus.Stream{{Name: "x", Dim: 8}}
	var seqs []corpus.MemorySequence
	big := warmLimit/(16+4+4*8) + 1000 // ids, sequence starts and values per sequence
	for i := range big + 600 {
		seqs = append(seqs, corpus.MemorySequence{ID: strconv.Itoa(i), Streams: []corpus.MemoryStream{{Dense: [][]float32{make([]float32, 8)}}}})
		seqs[i].Streams[0].Dense[0][0] = float32(i)
	}
	// One large chunk, then six small ones.
	m, err := corpus.NewMemory(streams, seqs, corpus.MemoryConfig{ChunkSequences: big})
	if err != nil {
		t.Fatal(err)
	}
	small, err := corpus.NewMemory(streams, seqs[:600], corpus.MemoryConfig{ChunkSequences: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src  corpus.Source
		want int
	}{{m, 1}, {small, 6}} {
		cfg := Config{Randomize: randomize.Config{Kind: "window", WindowChunks: 8}, Schedule: ConstantSchedule(500), waitVisits: true}
		s := mustNew(t, c.src, cfg)
		cfg.fileLayout = true
		f := mustNew(t, c.src, cfg)
		n := int(c.src.Layout().TotalSamples()/500) + 1
		if got, want := readN(t, s, n), readN(t, f, n); !reflect.DeepEqual(got, want) {
			t.Fatal("minibatches differ from file layout's")
		}
		if got := int(s.cache.arranged.Load()); got != c.want {
			t.Errorf("%d of %d chunks arranged, want %d", got, c.src.Layout().NumChunks(), c.want)
		}
	}
}

// Chunks too large to be arranged are recycled as before: every evicted
// one goes back to the corpus for the next load, none is kept back for an
// arrangement that is not made.
func TestLargeChunksAreRecycled(t *testing.T) {
	streams := []corpus.Stream{{Name: "x", Dim: 8}}
	big := warmLimit/(16+4+4*8) + 1000
	seqs := make([]corpus.MemorySequence, 4*big)
	for i := range seqs {
		seqs[i] = corpus.MemorySequence{ID: strconv.Itoa(i), Streams: []corpus.MemoryStream{{Dense: [][]float32{make([]float32, 8)}}}}
	}
	m, err := corpus.NewMemory(streams, seqs, corpus.MemoryConfig{ChunkSequences: big})
	if err != nil {
		t.Fatal(err)
	}
	rc := &recycling{testCorpus: &testCorpus{m, seqs}}
	s := mustNew(t, rc, Config{Randomize: randomize.Config{Kind: "window", WindowChunks: 1}, Schedule: ConstantSchedule(4096), EpochSize: EpochInf})
	readN(t, s, 3*len(seqs)/4096+1)
	evicted := s.ChunkLoads() - s.cache.resident()
	if evicted < 2 || rc.reused < evicted*9/10 {
		t.Errorf("%d loads reused a chunk of %d evicted", rc.reused, evicted)
	}
	if n := s.cache.arranged.Load(); n != 0 {
		t.Errorf("%d large chunks arranged", n)
	}
}

// A reader that does not wait for orders (the default) still arranges most
// chunks: each window's order is asked for two windows ahead, so only the
// first chunks after the start go without. It changes no minibatch.
func TestOrdersAreReadyAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	tc := makeCorpus(t, rng, corpusOpts{n: 2000, chunkSeq: 10})
	// Loads of an in-memory corpus take no time, so whether an order
	// computed in the background is ready would be a race with the
	// loader; each load here takes as long as a small chunk's parse, which
	// is what the orders are prepared ahead of.
	slow := slowCorpus{tc, 500 * time.Microsecond}
	for _, prefetch := range []int{0, 3} {
		cfg := Config{Randomize: randomize.Config{Kind: "window", WindowChunks: 8, Seed: 4},
			Schedule: ConstantSchedule(40), EpochSize: EpochInf, Prefetch: prefetch > 0, PrefetchChunks: prefetch}
		n := 3 * int(tc.Layout().TotalSamples()) / 40
		s := mustNew(t, slow, cfg)
		got := readN(t, s, n)
		s.Close()
		cfg.fileLayout = true
		if want := readN(t, mustNew(t, tc, cfg), n); !reflect.DeepEqual(got, want) {
			t.Fatalf("prefetch %d: minibatches differ from file layout's", prefetch)
		}
		// Only the loads of the first window may find no order ready (the
		// windows after it are prepared ahead); without preparing ahead the
		// first load of every window would (about 73 of these loads).
		if loads, arranged := s.ChunkLoads(), int(s.cache.arranged.Load()); loads-arranged > 2*cfg.Randomize.WindowChunks {
			t.Errorf("prefetch %d: %d of %d loads arranged, want all but at most two windows' chunks", prefetch, arranged, loads)
		}
	}
}

// slowCorpus is a corpus whose every load takes at least d.
type slowCorpus struct {
	corpus.Source
	d time.Duration
}

func (c slowCorpus) LoadChunk(i int) (*corpus.Chunk, error) {
	time.Sleep(c.d)
	return c.Source.LoadChunk(i)
}
