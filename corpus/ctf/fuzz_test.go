package ctf

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// FuzzParseReal: no panic; every accepted number agrees with strconv.
func FuzzParseReal(f *testing.F) {
	for _, s := range []string{"1", "-123", "45.", "6.78", "9.10e-11", ".5", "inf", "1.0f", "45.e3", "3.4028236e38",
		"1.00000005960464477539062500000001", "0.000000000000000000000000000000000000000000001", "99999999999999999999e-20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, j, err := parseReal([]byte(s), 0)
		if j < 0 || j > len(s) {
			t.Fatalf("end %d outside [0, %d]", j, len(s))
		}
		if err != nil || j != len(s) {
			return
		}
		want, werr := strconv.ParseFloat(s, 32)
		if werr != nil {
			t.Fatalf("%q accepted as %v; strconv: %v", s, v, werr)
		}
		if math.Float32bits(v) != math.Float32bits(float32(want)) {
			t.Fatalf("%q = %v, strconv says %v", s, v, float32(want))
		}
	})
}

// checkDiag asserts a diagnostic's position is inside the data.
func checkDiag(t *testing.T, err error, data []byte) {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("diagnostic %v is not a *ctf.Error", err)
	}
	if e.Line < 1 || e.Col < 1 || e.Offset < 0 || e.Offset > int64(len(data)) || e.Err == nil {
		t.Fatalf("bad position in %v", e)
	}
	if Kind(e) == "other" {
		t.Fatalf("diagnostic %v has no known kind", e)
	}
}

// FuzzIndex: the indexer and parser on arbitrary bytes never panic; the
// index is consistent and every diagnostic carries a valid position.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{"1 |a 1 |b 1:2\n1 |a 2\n", "|a 1\n|b 0:1\n", "\xEF\xBB\xBF1 |a 1\r\n", "\xFF\xFE", "x\n", "1 |a 1 |a 2\n",
		"2 |a 1e400\n", "1 |#c|a 1\n\n\n", "1 |b 5:1 3:x\n"} {
		f.Add([]byte(s), false, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, lineMode bool, mb uint8) {
		cfg := Config{Streams: []corpus.Stream{dense("a", 2), sparse("b", 4)}, LineMode: lineMode, MaxErrors: 1 << 30, ChunkBytes: 16}
		if mb%3 == 1 {
			cfg.DefinesMBSize = "a"
		} else if mb%3 == 2 {
			cfg.Label = "b"
		}
		x, err := buildIndex(bytes.NewReader(data), &cfg, "fuzz")
		ref := newIndexer(&cfg, "fuzz")
		ref.lineByLine = true
		refErr := ref.run(bytes.NewReader(data))
		if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
			t.Fatalf("fast path error %v, line-by-line error %v", err, refErr)
		}
		if err != nil {
			checkDiag(t, err, data)
			return
		}
		if !reflect.DeepEqual(x, ref.x) {
			t.Fatalf("fast path index %+v differs from line-by-line %+v", x, ref.x)
		}
		if err := x.check(int64(len(data))); err != nil {
			t.Fatalf("inconsistent index: %v", err)
		}
		for _, d := range x.dropped {
			checkDiag(t, &d, data)
		}
		carried := make([]int64, len(cfg.Streams))
		var spare *corpus.Chunk // the previous chunk, poisoned, to recycle
		for c := 0; c+1 < len(x.chunkStart); c++ {
			first := x.chunkStart[c]
			p := newChunkParser(&cfg, "fuzz", x)
			ch, _ := p.parse(c, chunkBytes(x, c, data), nil, nil)
			// A recycled chunk's old contents never show through.
			if again, _ := newChunkParser(&cfg, "fuzz", x).parse(c, chunkBytes(x, c, data), spare, nil); !reflect.DeepEqual(again, ch) {
				t.Fatalf("chunk %d parsed into a recycled chunk: %+v, fresh %+v", c, again, ch)
			}
			// Nor do a scratch chunk's (the arrays a parse builds in).
			ps := newChunkParser(&cfg, "fuzz", x)
			ps.scratch = poisoned(ch)
			if again, _ := ps.parse(c, chunkBytes(x, c, data), poisoned(ch), nil); !reflect.DeepEqual(again, ch) {
				t.Fatalf("chunk %d parsed through a scratch chunk: %+v, fresh %+v", c, again, ch)
			}
			// An arranged parse, through poisoned scratch and destination
			// chunks, is the plain parse arranged.
			order := rotated(len(ch.IDs), int(first))
			pa := newChunkParser(&cfg, "fuzz", x)
			pa.scratch = poisoned(ch)
			if got, want := first2(pa.parse(c, chunkBytes(x, c, data), poisoned(ch), order)), corpus.Arrange(poisoned(ch), ch, order); !reflect.DeepEqual(got, want) {
				t.Fatalf("chunk %d parsed arranged in %v: %+v, want %+v", c, order, got, want)
			}
			spare = poisoned(ch)
			for s, n := range p.carried {
				carried[s] += n
			}
			for i, id := range ch.IDs {
				off := seqOffset(x, first+i)
				want := string(data[off : off+int64(idLen(data[off:]))])
				if x.lineMode {
					want = strconv.Itoa(bytes.Count(data[:off], []byte{'\n'}))
				}
				if id != want {
					t.Fatalf("sequence %d at offset %d: id %q, want %q", first+i, off, id, want)
				}
			}
			for i, b := range ch.Bad {
				if b != nil {
					checkDiag(t, b, data)
					continue
				}
				for s, st := range cfg.Streams {
					if ch.SampleCount(s, i) < 1 {
						t.Fatalf("good sequence %d has no samples in %s", first+i, st.Name)
					}
				}
			}
			for _, w := range p.warns {
				checkDiag(t, &w, data)
			}
			for s, st := range cfg.Streams {
				d := ch.Streams[s]
				if !st.Sparse && len(d.Dense) != int(d.SeqStart[len(d.SeqStart)-1])*st.Dim {
					t.Fatalf("dense stream size mismatch")
				}
				if st.Sparse && len(d.RowStart) != int(d.SeqStart[len(d.SeqStart)-1])+1 {
					t.Fatalf("sparse row count mismatch")
				}
			}
		}
		// Invariant 3: the per-stream totals gathered while parsing equal
		// an independent count over the indexed sequences' lines.
		if want := carriedTotals(x, &cfg, data); !reflect.DeepEqual(carried, want) {
			t.Fatalf("per-stream lines from parsing %v, want %v", carried, want)
		}
	})
}

// FuzzParseRow: one row with a fixed prefix and suffix sequence, so the row
// parser sees arbitrary content between well-formed neighbours.
func FuzzParseRow(f *testing.F) {
	for _, s := range []string{"|A 1.0 |B 1:1", "|A 2,0 |B 2:2", "| A 3", "|#x|A 1|B 0:0", "|A 1 1", "|B 10:1", "|A\t|B", "|A 1.5e3 |C zz |B 3:-0"} {
		f.Add(s)
	}
	streams := []corpus.Stream{dense("A", 1), sparse("B", 10)}
	f.Fuzz(func(t *testing.T, row string) {
		if bytes.ContainsAny([]byte(row), "\n") {
			return
		}
		data := []byte("0 |A 0 |B 0:0\n1 " + row + "\n2 |A 2 |B 2:2\n")
		cfg := Config{Streams: streams, MaxErrors: 1 << 30}
		x, err := buildIndex(bytes.NewReader(data), &cfg, "fuzz")
		if err != nil {
			t.Fatalf("index: %v", err)
		}
		p := newChunkParser(&cfg, "fuzz", x)
		ch, _ := p.parse(0, chunkBytes(x, 0, data), nil, nil)
		if ch.BadAt(0) != nil || ch.BadAt(ch.Len()-1) != nil {
			t.Fatalf("neighbour rows affected: %v", ch.Bad)
		}
		for i, b := range ch.Bad {
			if b != nil {
				checkDiag(t, b, data)
				if e := b.(*Error); e.Line != 2 || e.Offset < 14 {
					t.Fatalf("sequence %d: diagnostic outside row 2: %v", i, e)
				}
			}
		}
	})
}

// FuzzCacheDecode: the cache decoder never panics and accepts only what it
// would write itself.
func FuzzCacheDecode(f *testing.F) {
	x, _ := buildIndexString("1 |a 1\n2 |a 2\n2 |a 3\n", Config{Streams: []corpus.Stream{dense("a", 1)}, Label: "a"})
	f.Add(encodeIndex(cacheKey{size: x.size}, x))
	y, _ := buildIndexString("|a 1\n|a 2\n", Config{Streams: []corpus.Stream{dense("a", 1)}})
	f.Add(encodeIndex(cacheKey{size: y.size, mtime: 5}, y))
	f.Add([]byte("BPCTFIDX"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, x, err := decodeIndex(data)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeIndex(k, x), data) {
			t.Fatal("accepted cache does not re-encode to itself")
		}
	})
}

// FuzzWriterRoundTrip: random corpora from a fuzzed seed round-trip exactly.
func FuzzWriterRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint16(100))
	f.Fuzz(func(t *testing.T, a, b uint64, chunk uint16) {
		rng := rand.New(rand.NewPCG(a, b))
		streams := []corpus.Stream{sparse("s", 1+rng.IntN(1000)), dense("d", 1+rng.IntN(5))}
		seqs := randomCorpus(rng, streams, 1+rng.IntN(20))
		data := writeCorpus(t, streams, seqs)
		got, err := readBack(t, data, streams, int64(chunk)+1)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameBits(seqs, got); err != nil {
			t.Fatal(err)
		}
	})
}

// poisoned returns a deep copy of ch with every number and id replaced by
// garbage and every slice at full capacity, as a recycled chunk may look.
// rotated returns a permutation of 0..n-1: reversed, then rotated by k.
func rotated(n, k int) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32((n - 1 - i + k) % n)
	}
	return order
}

func first2[A, B any](a A, _ B) A { return a }

func poisoned(ch *corpus.Chunk) *corpus.Chunk {
	out := &corpus.Chunk{First: -7, IDs: make([]string, len(ch.IDs)+3), Bad: make([]error, len(ch.IDs)+1)}
	for i := range out.IDs {
		out.IDs[i] = "poison"
	}
	for _, d := range ch.Streams {
		fill32 := func(a []int32) []int32 {
			b := make([]int32, len(a)+5)
			for i := range b {
				b[i] = -99
			}
			return b
		}
		fillF := func(a []float32) []float32 {
			b := make([]float32, len(a)+5)
			for i := range b {
				b[i] = -99
			}
			return b
		}
		out.Streams = append(out.Streams, corpus.StreamData{SeqStart: fill32(d.SeqStart), Dense: fillF(d.Dense),
			RowStart: fill32(d.RowStart), Indices: fill32(d.Indices), Values: fillF(d.Values)})
	}
	return out
}
