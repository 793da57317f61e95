package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/batchprep/batchprep/graph"
)

// MemReader is an in-memory graph.Reader for tests and examples: Sets[s]
// maps each bucket to its edges in storage order.
type MemReader struct {
	L, R int
	Sets []map[graph.Bucket]*graph.Edges
}

// Partitions implements graph.Reader.
func (m *MemReader) Partitions() (int, int) { return m.L, m.R }

// NumEdgeSets implements graph.Reader.
func (m *MemReader) NumEdgeSets() int { return len(m.Sets) }

// NumEdges implements graph.Reader; a bucket absent from the map is empty.
func (m *MemReader) NumEdges(s int, b graph.Bucket) (int, error) {
	if s < 0 || s >= len(m.Sets) || b.Lhs < 0 || b.Lhs >= m.L || b.Rhs < 0 || b.Rhs >= m.R {
		return 0, fmt.Errorf("plan: no bucket %v in edge set %d", b, s)
	}
	if e := m.Sets[s][b]; e != nil {
		return e.Len(), nil
	}
	return 0, nil
}

// ReadEdges implements graph.Reader.
func (m *MemReader) ReadEdges(s int, b graph.Bucket, begin, end int, dst *graph.Edges) error {
	n, err := m.NumEdges(s, b)
	if err != nil {
		return err
	}
	if begin < 0 || begin > end || end > n {
		return fmt.Errorf("plan: range [%d,%d) outside bucket %v of %d edges", begin, end, b, n)
	}
	if n == 0 {
		return nil
	}
	e := m.Sets[s][b]
	dst.Lhs = append(dst.Lhs, e.Lhs[begin:end]...)
	dst.Rhs = append(dst.Rhs, e.Rhs[begin:end]...)
	dst.Rel = append(dst.Rel, e.Rel[begin:end]...)
	dst.Ordinal = append(dst.Ordinal, e.Ordinal[begin:end]...)
	if e.Weight != nil {
		dst.Weight = append(dst.Weight, e.Weight[begin:end]...)
	}
	return nil
}

// Fingerprint hashes the whole content (shape, every bucket's columns).
func (m *MemReader) Fingerprint() string {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); h.Write(b[:]) }
	put(uint64(m.L))
	put(uint64(m.R))
	put(uint64(len(m.Sets)))
	for _, set := range m.Sets {
		for i := 0; i < m.L; i++ {
			for j := 0; j < m.R; j++ {
				e := set[graph.Bucket{Lhs: i, Rhs: j}]
				if e == nil {
					put(0)
					continue
				}
				put(uint64(e.Len()))
				for k := 0; k < e.Len(); k++ {
					put(uint64(e.Lhs[k])<<32 | uint64(e.Rhs[k]))
					put(uint64(e.Rel[k]))
					put(e.Ordinal[k])
					if e.Weight != nil {
						put(uint64(math.Float32bits(e.Weight[k])))
					}
				}
			}
		}
	}
	return "mem-sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
}
