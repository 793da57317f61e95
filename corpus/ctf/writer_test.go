package ctf

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

type seqData struct {
	id      string
	samples [][]Sample
}

// randomCorpus makes n sequences over streams with random lengths and values
// (including negative zero, subnormals and extremes).
func randomCorpus(rng *rand.Rand, streams []corpus.Stream, n int) []seqData {
	var out []seqData
	for i := 0; i < n; i++ {
		sd := seqData{id: strconv.Itoa(i), samples: make([][]Sample, len(streams))}
		for s, st := range streams {
			k := 1 + rng.IntN(4)
			for j := 0; j < k; j++ {
				var smp Sample
				if st.Sparse {
					m := rng.IntN(4)
					smp.Indices, smp.Values = make([]int32, m), make([]float32, m)
					for e := range m {
						smp.Indices[e] = int32(rng.IntN(st.Dim))
						smp.Values[e] = randFloat(rng)
					}
				} else {
					smp.Values = make([]float32, st.Dim)
					for e := range smp.Values {
						smp.Values[e] = randFloat(rng)
					}
				}
				sd.samples[s] = append(sd.samples[s], smp)
			}
		}
		out = append(out, sd)
	}
	return out
}

func randFloat(rng *rand.Rand) float32 {
	switch rng.IntN(6) {
	case 0:
		return float32(math.Copysign(0, -1))
	case 1:
		return float32(rng.IntN(100))
	default:
		for {
			f := math.Float32frombits(rng.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	}
}

func writeCorpus(t testing.TB, streams []corpus.Stream, seqs []seqData) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf, streams)
	for _, sd := range seqs {
		if err := w.Write(sd.id, sd.samples); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBack opens data and returns every sequence as written.
func readBack(t testing.TB, data []byte, streams []corpus.Stream, chunkBytes int64) ([]seqData, error) {
	p := filepath.Join(t.TempDir(), "rt.ctf")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, Config{Streams: streams, ChunkBytes: chunkBytes})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []seqData
	for c := 0; c < r.Layout().NumChunks(); c++ {
		ch, err := r.LoadChunk(c)
		if err != nil {
			return nil, err
		}
		for i := range ch.IDs {
			out = append(out, seqData{ch.IDs[i], ChunkSamples(ch, streams, i)})
		}
	}
	return out, nil
}

func sameBits(a, b []seqData) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d sequences, want %d", len(b), len(a))
	}
	for i := range a {
		if a[i].id != b[i].id || len(a[i].samples) != len(b[i].samples) {
			return fmt.Errorf("sequence %d: id %q vs %q", i, a[i].id, b[i].id)
		}
		for s := range a[i].samples {
			x, y := a[i].samples[s], b[i].samples[s]
			if len(x) != len(y) {
				return fmt.Errorf("sequence %d stream %d: %d samples vs %d", i, s, len(x), len(y))
			}
			for j := range x {
				if len(x[j].Values) != len(y[j].Values) || !reflect.DeepEqual(normIdx(x[j].Indices), normIdx(y[j].Indices)) {
					return fmt.Errorf("sequence %d stream %d sample %d: shape differs", i, s, j)
				}
				for e := range x[j].Values {
					if math.Float32bits(x[j].Values[e]) != math.Float32bits(y[j].Values[e]) {
						return fmt.Errorf("sequence %d stream %d sample %d value %d: %v vs %v", i, s, j, e, x[j].Values[e], y[j].Values[e])
					}
				}
			}
		}
	}
	return nil
}

func normIdx(x []int32) []int32 {
	if len(x) == 0 {
		return nil
	}
	return x
}

// Invariant 10: write-then-read is the identity, bit for bit.
func TestWriterRoundTrip(t *testing.T) {
	streams := []corpus.Stream{dense("f", 3), sparse("l", 50), dense("one", 1)}
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		seqs := randomCorpus(rng, streams, 1+rng.IntN(60))
		data := writeCorpus(t, streams, seqs)
		got, err := readBack(t, data, streams, int64(1+rng.IntN(2000)))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, data)
		}
		if err := sameBits(seqs, got); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func TestWriterRejects(t *testing.T) {
	streams := []corpus.Stream{dense("f", 2), sparse("s", 3)}
	ok := [][]Sample{{{Values: []float32{1, 2}}}, {{Indices: []int32{2}, Values: []float32{1}}}}
	for name, tc := range map[string]struct {
		id string
		s  [][]Sample
	}{
		"empty id":      {"", ok},
		"non-digit id":  {"a1", ok},
		"no samples":    {"1", [][]Sample{{{Values: []float32{1, 2}}}, {}}},
		"short dense":   {"1", [][]Sample{{{Values: []float32{1}}}, ok[1]}},
		"index range":   {"1", [][]Sample{ok[0], {{Indices: []int32{3}, Values: []float32{1}}}}},
		"nan":           {"1", [][]Sample{{{Values: []float32{float32(math.NaN()), 2}}}, ok[1]}},
		"stream count":  {"1", ok[:1]},
		"mismatched sp": {"1", [][]Sample{ok[0], {{Indices: []int32{1, 2}, Values: []float32{1}}}}},
	} {
		w := NewWriter(&bytes.Buffer{}, streams)
		if err := w.Write(tc.id, tc.s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	w := NewWriter(&bytes.Buffer{}, streams)
	if err := w.Write("1", ok); err != nil {
		t.Fatal(err)
	}
	if err := w.Write("1", ok); err == nil {
		t.Error("repeated id accepted")
	}
}
