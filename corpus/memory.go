package corpus

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"sync/atomic"
)

// SparseEntry is one index:value pair of a sparse sample.
type SparseEntry struct {
	Index int32
	Value float32
}

// MemoryStream holds one stream's samples of one sequence: Dense for a dense
// stream (each sample exactly Dim values), Sparse for a sparse one (each
// sample a list of entries, kept in the given order).
type MemoryStream struct {
	Dense  [][]float32
	Sparse [][]SparseEntry
}

// MemorySequence is one sequence of an in-memory corpus.
type MemorySequence struct {
	ID string
	// Streams has one entry per configured stream, in configuration order
	// (missing trailing entries mean "no samples").
	Streams []MemoryStream
	// Err, when non-nil, marks the sequence as malformed, as a parser would:
	// it keeps its counts on the layout, but LoadChunk reports Err in
	// Chunk.Bad and delivers no data for it.
	Err error
}

// MemoryConfig shapes an in-memory corpus.
type MemoryConfig struct {
	// ChunkSequences is the number of sequences per chunk (default 4).
	ChunkSequences int
	// DefinesMBSize names the stream whose sample count is the sequence's
	// sample count; empty means the largest count over the streams.
	DefinesMBSize string
	// Label names the stream that epoch sizes count; empty means the same
	// count as the minibatch size.
	Label string
}

// Memory is a Source built from Go slices, for tests, examples and the demo.
// Its chunks are built once by NewMemory; LoadChunk returns them shared, so
// callers must not modify a returned Chunk.
type Memory struct {
	streams []Stream
	layout  *Layout
	chunks  []*Chunk
	loads   []atomic.Int64
	digest  string
}

// NewMemory builds an in-memory corpus. It fails when a dense sample does not
// have exactly Dim values, a sparse index is outside [0, Dim), a sequence
// has no samples, or a named stream does not exist.
func NewMemory(streams []Stream, seqs []MemorySequence, cfg MemoryConfig) (*Memory, error) {
	if cfg.ChunkSequences == 0 {
		cfg.ChunkSequences = 4
	}
	if cfg.ChunkSequences < 0 {
		return nil, fmt.Errorf("corpus: memory: ChunkSequences %d < 0", cfg.ChunkSequences)
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("corpus: memory: no sequences")
	}
	mbStream, err := streamIndex(streams, cfg.DefinesMBSize, "DefinesMBSize")
	if err != nil {
		return nil, err
	}
	labelStream, err := streamIndex(streams, cfg.Label, "Label")
	if err != nil {
		return nil, err
	}
	m := &Memory{streams: append([]Stream(nil), streams...), layout: &Layout{}}
	l := m.layout
	l.Samples = make([]uint32, len(seqs))
	if labelStream >= 0 {
		l.Labels = make([]uint32, len(seqs))
	}
	for i := range seqs {
		sq := &seqs[i]
		if len(sq.Streams) > len(streams) {
			return nil, fmt.Errorf("corpus: memory: sequence %d (id %q) has %d streams, want at most %d", i, sq.ID, len(sq.Streams), len(streams))
		}
		var maxN int
		for s, st := range streams {
			n, err := checkMemoryStream(st, streamOf(sq, s))
			if err != nil {
				return nil, fmt.Errorf("corpus: memory: sequence %d (id %q): %w", i, sq.ID, err)
			}
			maxN = max(maxN, n)
		}
		n := maxN
		if mbStream >= 0 {
			n = countOf(streamOf(sq, mbStream))
		}
		if n == 0 {
			return nil, fmt.Errorf("corpus: memory: sequence %d (id %q) has no samples", i, sq.ID)
		}
		l.Samples[i] = uint32(n)
		if labelStream >= 0 {
			l.Labels[i] = uint32(countOf(streamOf(sq, labelStream)))
		}
	}
	for first := 0; first < len(seqs); first += cfg.ChunkSequences {
		l.ChunkStart = append(l.ChunkStart, first)
		m.chunks = append(m.chunks, buildMemoryChunk(streams, seqs, first, min(first+cfg.ChunkSequences, len(seqs))))
	}
	l.ChunkStart = append(l.ChunkStart, len(seqs))
	if err := l.Validate(); err != nil {
		return nil, err
	}
	m.loads = make([]atomic.Int64, len(m.chunks))
	m.digest = memoryDigest(streams, seqs, cfg)
	return m, nil
}

func streamIndex(streams []Stream, name, key string) (int, error) {
	if name == "" {
		return -1, nil
	}
	for i, s := range streams {
		if s.Name == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("corpus: memory: %s names unknown stream %q", key, name)
}

func streamOf(sq *MemorySequence, s int) *MemoryStream {
	if s < len(sq.Streams) {
		return &sq.Streams[s]
	}
	return &MemoryStream{}
}

func countOf(ms *MemoryStream) int { return len(ms.Dense) + len(ms.Sparse) }

func checkMemoryStream(st Stream, ms *MemoryStream) (int, error) {
	if st.Sparse {
		if len(ms.Dense) > 0 {
			return 0, fmt.Errorf("stream %q is sparse but has dense samples", st.Name)
		}
		for j, smp := range ms.Sparse {
			for _, e := range smp {
				if e.Index < 0 || int(e.Index) >= st.Dim {
					return 0, fmt.Errorf("stream %q sample %d: index %d outside [0, %d)", st.Name, j, e.Index, st.Dim)
				}
			}
		}
		return len(ms.Sparse), nil
	}
	if len(ms.Sparse) > 0 {
		return 0, fmt.Errorf("stream %q is dense but has sparse samples", st.Name)
	}
	for j, smp := range ms.Dense {
		if len(smp) != st.Dim {
			return 0, fmt.Errorf("stream %q sample %d: %d values, want %d", st.Name, j, len(smp), st.Dim)
		}
	}
	return len(ms.Dense), nil
}

func buildMemoryChunk(streams []Stream, seqs []MemorySequence, first, end int) *Chunk {
	c := &Chunk{First: first, Streams: make([]StreamData, len(streams))}
	for s := range c.Streams {
		c.Streams[s].SeqStart = []int32{0}
		if streams[s].Sparse {
			c.Streams[s].RowStart = []int32{0}
		}
	}
	for i := first; i < end; i++ {
		sq := &seqs[i]
		c.IDs = append(c.IDs, sq.ID)
		if sq.Err != nil && c.Bad == nil {
			c.Bad = make([]error, i-first, end-first)
		}
		if c.Bad != nil {
			c.Bad = append(c.Bad, sq.Err)
		}
		for s := range streams {
			d := &c.Streams[s]
			if sq.Err == nil {
				ms := streamOf(sq, s)
				for _, smp := range ms.Dense {
					d.Dense = append(d.Dense, smp...)
				}
				for _, smp := range ms.Sparse {
					for _, e := range smp {
						d.Indices = append(d.Indices, e.Index)
						d.Values = append(d.Values, e.Value)
					}
					d.RowStart = append(d.RowStart, int32(len(d.Indices)))
				}
				d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+int32(countOf(ms)))
			} else {
				d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1])
			}
		}
	}
	return c
}

// memoryDigest hashes everything that identifies the corpus's content.
func memoryDigest(streams []Stream, seqs []MemorySequence, cfg MemoryConfig) string {
	h := fnv.New64a()
	var b [8]byte
	u := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); h.Write(b[:]) }
	str := func(s string) { u(uint64(len(s))); h.Write([]byte(s)) }
	u(uint64(cfg.ChunkSequences))
	str(cfg.DefinesMBSize)
	str(cfg.Label)
	for _, st := range streams {
		str(st.Name)
		u(uint64(st.Dim))
		if st.Sparse {
			u(1)
		} else {
			u(0)
		}
	}
	for i := range seqs {
		sq := &seqs[i]
		str(sq.ID)
		if sq.Err != nil {
			str(sq.Err.Error())
		}
		for s := range streams {
			ms := streamOf(sq, s)
			u(uint64(len(ms.Dense)))
			for _, smp := range ms.Dense {
				for _, v := range smp {
					u(uint64(math.Float32bits(v)))
				}
			}
			u(uint64(len(ms.Sparse)))
			for _, smp := range ms.Sparse {
				u(uint64(len(smp)))
				for _, e := range smp {
					u(uint64(uint32(e.Index))<<32 | uint64(math.Float32bits(e.Value)))
				}
			}
		}
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// Layout returns the corpus layout.
func (m *Memory) Layout() *Layout { return m.layout }

// Streams returns the configured streams.
func (m *Memory) Streams() []Stream { return m.streams }

// LoadChunk returns chunk c (shared; do not modify it).
func (m *Memory) LoadChunk(c int) (*Chunk, error) {
	if c < 0 || c >= len(m.chunks) {
		return nil, fmt.Errorf("corpus: memory: chunk %d out of range [0, %d)", c, len(m.chunks))
	}
	m.loads[c].Add(1)
	return m.chunks[c], nil
}

// Loads returns how many times chunk c was loaded (tests use it to check
// which chunks a reader parsed).
func (m *Memory) Loads(c int) int64 { return m.loads[c].Load() }

// Fingerprint identifies the corpus's content: a hash of every id, value,
// stream and chunking setting.
func (m *Memory) Fingerprint() map[string]string {
	return map[string]string{"kind": "memory", "content": m.digest}
}
