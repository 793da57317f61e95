package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The binary layout, little-endian (str = uint32 n, then n bytes UTF-8):
//
//	"BPEMBED2"                     8 bytes, magic
//	str                            comparator
//	uint32 types
//	per type:
//	  str                          type name
//	  uint32 dim
//	  uint64 count
//	  count × str                  entity names, dictionary order
//	  count×dim float32            embeddings, row-major
//	uint32 relation entries
//	per entry (relation id order, side rhs then lhs):
//	  str name, str lhs type, str rhs type, str side, str operator
//	  uint32 n, n float32          parameters (see Relations)
//	uint32                         CRC-32C (Castagnoli) of all bytes before it
//
// A "BPEMBED1" file has no comparator and no relation entries.
const (
	magic   = "BPEMBED2"
	magicV1 = "BPEMBED1"
)

// ErrFormat marks a file that is not a valid export.
var ErrFormat = errors.New("export: not a valid embeddings file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the binary form of m.
func Encode(m *Model) []byte {
	b := []byte(magic)
	str := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	floats := func(v []float32) {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	str(m.Comparator)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Types)))
	for _, t := range m.Types {
		str(t.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Dim))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(t.Names)))
		for _, n := range t.Names {
			str(n)
		}
		floats(t.Emb[:len(t.Names)*t.Dim])
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Relations)))
	for _, r := range m.Relations {
		str(r.Name)
		str(r.Lhs)
		str(r.Rhs)
		str(r.Side)
		str(r.Operator)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Params)))
		floats(r.Params)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// Decode parses a binary export (invariant 2).
func Decode(b []byte) (*Model, error) {
	if len(b) < 16 || string(b[:8]) != magic && string(b[:8]) != magicV1 {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	v1 := string(b[:8]) == magicV1
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrFormat)
	}
	r := reader{b: body, off: 8}
	m := &Model{}
	if !v1 {
		m.Comparator = r.str()
	}
	nt := r.u32()
	for i := uint32(0); i < nt && r.err == nil; i++ {
		t := Type{Name: r.str(), Dim: int(r.u32())}
		count := r.u64()
		if r.err == nil && count > uint64(len(body)-r.off)/4 {
			r.fail("entity count %d larger than the file", count)
		}
		for j := uint64(0); j < count && r.err == nil; j++ {
			t.Names = append(t.Names, r.str())
		}
		t.Emb = r.floats(count * uint64(t.Dim))
		if r.err != nil {
			break
		}
		m.Types = append(m.Types, t)
	}
	if !v1 {
		nr := r.u32()
		for i := uint32(0); i < nr && r.err == nil; i++ {
			rel := Relation{Name: r.str(), Lhs: r.str(), Rhs: r.str(), Side: r.str(), Operator: r.str()}
			rel.Params = r.floats(uint64(r.u32()))
			m.Relations = append(m.Relations, rel)
		}
	}
	if r.err == nil && r.off != len(body) {
		r.fail("%d trailing bytes", len(body)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrFormat, r.off, fmt.Sprintf(format, a...))
	}
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail("truncated")
		return false
	}
	return true
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// floats reads n float32 values, refusing a count the file cannot hold
// before allocating.
func (r *reader) floats(n uint64) []float32 {
	if r.err == nil && n > uint64(len(r.b)-r.off)/4 {
		r.fail("%d floats do not fit", n)
	}
	if r.err != nil {
		return nil
	}
	v := make([]float32, n)
	for k := range v {
		v[k] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[r.off:]))
		r.off += 4
	}
	return v
}

func (r *reader) str() string {
	n := r.u32()
	if !r.need(int(n)) {
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}
