package corpus

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func memStreams() []Stream {
	return []Stream{{Name: "x", Dim: 2}, {Name: "y", Dim: 5, Sparse: true}}
}

func memSeqs() []MemorySequence {
	return []MemorySequence{
		{ID: "10", Streams: []MemoryStream{{Dense: [][]float32{{1, 2}, {3, 4}}}, {Sparse: [][]SparseEntry{{{4, 1}, {0, 2}}}}}},
		{ID: "11", Streams: []MemoryStream{{Dense: [][]float32{{5, 6}}}}},
		{ID: "12", Streams: []MemoryStream{{Dense: [][]float32{{7, 8}}}, {Sparse: [][]SparseEntry{{}, {{1, 3}}, {{2, 4}}}}}, Err: nil},
		{ID: "13", Streams: []MemoryStream{{Dense: [][]float32{{9, 9}}}}, Err: errors.New("bad")},
		{ID: "14", Streams: []MemoryStream{{Dense: [][]float32{{0, 1}}}}},
	}
}

func TestMemoryLayoutAndChunks(t *testing.T) {
	m, err := NewMemory(memStreams(), memSeqs(), MemoryConfig{ChunkSequences: 2, Label: "y"})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layout()
	// Invariant 1: chunks of 2 contiguous ordinals.
	if !reflect.DeepEqual(l.ChunkStart, []int{0, 2, 4, 5}) {
		t.Errorf("ChunkStart %v", l.ChunkStart)
	}
	// Sample count: the largest over the streams; labels: the y stream.
	if !reflect.DeepEqual(l.Samples, []uint32{2, 1, 3, 1, 1}) || !reflect.DeepEqual(l.Labels, []uint32{1, 0, 3, 0, 0}) {
		t.Errorf("Samples %v Labels %v", l.Samples, l.Labels)
	}
	c, err := m.LoadChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	if c.First != 0 || !reflect.DeepEqual(c.IDs, []string{"10", "11"}) {
		t.Errorf("chunk 0: First %d IDs %v", c.First, c.IDs)
	}
	x, y := c.Streams[0], c.Streams[1]
	if !reflect.DeepEqual(x.SeqStart, []int32{0, 2, 3}) || !reflect.DeepEqual(x.Dense, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("x: %+v", x)
	}
	if !reflect.DeepEqual(y.SeqStart, []int32{0, 1, 1}) || !reflect.DeepEqual(y.RowStart, []int32{0, 2}) ||
		!reflect.DeepEqual(y.Indices, []int32{4, 0}) || !reflect.DeepEqual(y.Values, []float32{1, 2}) {
		t.Errorf("y: %+v", y)
	}
	c1, _ := m.LoadChunk(1)
	if c1.BadAt(0) != nil || c1.BadAt(1) == nil || c1.SampleCount(0, 1) != 0 || c1.SampleCount(1, 0) != 3 {
		t.Errorf("chunk 1: Bad %v counts x %d y %d", c1.Bad, c1.SampleCount(0, 1), c1.SampleCount(1, 0))
	}
	// Bad is nil for a chunk with no malformed sequence, and has one entry
	// per sequence otherwise.
	if c.Bad != nil || len(c1.Bad) != c1.Len() {
		t.Errorf("Bad: chunk 0 %v, chunk 1 %d entries for %d sequences", c.Bad, len(c1.Bad), c1.Len())
	}
	if m.Loads(0) != 1 || m.Loads(1) != 1 || m.Loads(2) != 0 {
		t.Errorf("loads %d %d %d", m.Loads(0), m.Loads(1), m.Loads(2))
	}
	if _, err := m.LoadChunk(3); err == nil {
		t.Error("LoadChunk(3) should fail")
	}
}

func TestMemoryDefinesMBSize(t *testing.T) {
	m, err := NewMemory(memStreams(), memSeqs()[:3], MemoryConfig{DefinesMBSize: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Layout().Samples, []uint32{2, 1, 1}) || m.Layout().Labels != nil {
		t.Errorf("Samples %v Labels %v", m.Layout().Samples, m.Layout().Labels)
	}
}

func TestMemoryErrors(t *testing.T) {
	st := memStreams()
	cases := []struct {
		seqs []MemorySequence
		cfg  MemoryConfig
		want string
	}{
		{nil, MemoryConfig{}, "no sequences"},
		{memSeqs(), MemoryConfig{Label: "z"}, `Label names unknown stream "z"`},
		{[]MemorySequence{{ID: "a", Streams: []MemoryStream{{Dense: [][]float32{{1}}}}}}, MemoryConfig{}, "1 values, want 2"},
		{[]MemorySequence{{ID: "a", Streams: []MemoryStream{{}, {Sparse: [][]SparseEntry{{{5, 1}}}}}}}, MemoryConfig{}, "index 5 outside [0, 5)"},
		{[]MemorySequence{{ID: "a"}}, MemoryConfig{}, `sequence 0 (id "a") has no samples`},
		{[]MemorySequence{{ID: "a", Streams: []MemoryStream{{Dense: [][]float32{{1, 2}}}}}}, MemoryConfig{DefinesMBSize: "y"}, "no samples"},
	}
	for i, c := range cases {
		_, err := NewMemory(st, c.seqs, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("case %d: err %v, want %q", i, err, c.want)
		}
	}
}

func TestMemoryFingerprint(t *testing.T) {
	a, _ := NewMemory(memStreams(), memSeqs(), MemoryConfig{})
	b, _ := NewMemory(memStreams(), memSeqs(), MemoryConfig{})
	if !reflect.DeepEqual(a.Fingerprint(), b.Fingerprint()) {
		t.Error("same content, different fingerprints")
	}
	seqs := memSeqs()
	seqs[4].Streams[0].Dense[0][1] = 2
	c, _ := NewMemory(memStreams(), seqs, MemoryConfig{})
	d, _ := NewMemory(memStreams(), memSeqs(), MemoryConfig{ChunkSequences: 3})
	if reflect.DeepEqual(a.Fingerprint(), c.Fingerprint()) || reflect.DeepEqual(a.Fingerprint(), d.Fingerprint()) {
		t.Error("changed value or chunking kept the fingerprint")
	}
}
