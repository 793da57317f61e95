package train

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/batchprep/batchprep/graph/train/model"
)

// Table files (emb_{type}_{partition}.v{seq}.bin) hold one partition's
// embeddings and row-wise Adagrad state, little-endian:
//
//	offset 0   8 bytes  magic "BPTABLE1"
//	offset 8   uint64   rows
//	offset 16  uint32   dimension
//	offset 20  uint32   0 (reserved)
//	offset 24  rows×dimension float32 embeddings, row-major
//	then       rows float32 Adagrad accumulators
//
// Their SHA-256 is recorded in the checkpoint manifest, which is what makes
// a file part of a checkpoint.
const tableMagic = "BPTABLE1"

func encodeTable(t *model.Table) []byte {
	b := make([]byte, 24, 24+4*(len(t.Emb)+len(t.Acc)))
	copy(b, tableMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(t.Rows))
	binary.LittleEndian.PutUint32(b[16:], uint32(t.Dim))
	b = appendFloats(b, t.Emb)
	return appendFloats(b, t.Acc)
}

func decodeTable(b []byte) (*model.Table, error) {
	if len(b) < 24 || string(b[:8]) != tableMagic {
		return nil, fmt.Errorf("not a table file (magic %q)", b[:min(8, len(b))])
	}
	if r := binary.LittleEndian.Uint32(b[20:]); r != 0 {
		return nil, fmt.Errorf("table file: reserved header field is %d, not 0", r)
	}
	rows, dim := binary.LittleEndian.Uint64(b[8:]), uint64(binary.LittleEndian.Uint32(b[16:]))
	if r := binary.LittleEndian.Uint32(b[20:]); r != 0 {
		return nil, fmt.Errorf("table file: reserved field is %d, want 0", r)
	}
	// Each row takes 4*(dim+1) bytes; dividing first keeps the check free
	// of overflow whatever the header claims.
	if dim == 0 || rows > uint64(len(b)-24)/(4*(dim+1)) || uint64(len(b)-24) != 4*rows*(dim+1) {
		return nil, fmt.Errorf("table file: %d bytes do not hold %d rows of dimension %d", len(b), rows, dim)
	}
	t := model.MakeTable(int(rows), int(dim))
	decodeFloats(t.Emb, b[24:])
	decodeFloats(t.Acc, b[24+4*rows*dim:])
	return t, nil
}

func appendFloats(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func readFloats(b []byte, n int) []float32 {
	v := make([]float32, n)
	decodeFloats(v, b)
	return v
}

// decodeFloats fills v from the little-endian float32s at the start of b.
func decodeFloats(v []float32, b []byte) {
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// Model files (model.v{seq}.bin) hold the dense parameters: magic
// "BPMODEL1", uint32 count, then count vectors, each a uint32 length n, n
// float32 values and n float32 Adagrad accumulators. The vectors are each
// relation's operator parameters (side 0, then side 1 in dynamic mode), in
// relation order, then each entity type's global embedding (sorted type
// names) when global_emb is set.
const modelMagic = "BPMODEL1"

func modelVectors(m *model.Model) []*model.Dense {
	var vs []*model.Dense
	for _, ps := range m.Params {
		for _, p := range ps {
			if p != nil {
				vs = append(vs, p)
			}
		}
	}
	return append(vs, m.Global...)
}

func encodeModel(m *model.Model) []byte {
	vs := modelVectors(m)
	b := append([]byte(modelMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(vs)))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v.P)))
		b = appendFloats(b, v.P)
		b = appendFloats(b, v.Acc)
	}
	return b
}

// decodeModelInto reads a model file into m, whose layout must match.
func decodeModelInto(b []byte, m *model.Model) error {
	if len(b) < 12 || string(b[:8]) != modelMagic {
		return fmt.Errorf("not a model file")
	}
	vs := modelVectors(m)
	if n := binary.LittleEndian.Uint32(b[8:]); int(n) != len(vs) {
		return fmt.Errorf("model file has %d parameter vectors, the config makes %d", n, len(vs))
	}
	b = b[12:]
	for i, v := range vs {
		if len(b) < 4 {
			return fmt.Errorf("model file truncated at vector %d", i)
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n != len(v.P) || len(b) < 4+8*n {
			return fmt.Errorf("model file vector %d: length %d, want %d", i, n, len(v.P))
		}
		copy(v.P, readFloats(b[4:], n))
		copy(v.Acc, readFloats(b[4+4*n:], n))
		b = b[4+8*n:]
	}
	if len(b) != 0 {
		return fmt.Errorf("model file has %d trailing bytes", len(b))
	}
	return nil
}
