package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The binary layout, little-endian:
//
//	"BPEMBED1"                     8 bytes, magic
//	uint32 types
//	per type:
//	  uint32 n, n bytes            type name (UTF-8)
//	  uint32 dim
//	  uint64 count
//	  count × (uint32 n, n bytes)  entity names, dictionary order
//	  count×dim float32            embeddings, row-major
//	uint32                         CRC-32C (Castagnoli) of all bytes before it
const magic = "BPEMBED1"

// ErrFormat marks a file that is not a valid export.
var ErrFormat = errors.New("export: not a valid embeddings file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the binary form of types.
func Encode(types []Type) []byte {
	b := append([]byte(magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(types)))
	str := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	for _, t := range types {
		str(t.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Dim))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(t.Names)))
		for _, n := range t.Names {
			str(n)
		}
		for _, v := range t.Emb[:len(t.Names)*t.Dim] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// Decode parses a binary export (invariant 2).
func Decode(b []byte) ([]Type, error) {
	if len(b) < 16 || string(b[:8]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrFormat)
	}
	r := reader{b: body, off: 8}
	nt := r.u32()
	var out []Type
	for i := uint32(0); i < nt && r.err == nil; i++ {
		t := Type{Name: r.str(), Dim: int(r.u32())}
		count := r.u64()
		if r.err == nil && count > uint64(len(body)-r.off)/4 {
			r.fail("entity count %d larger than the file", count)
		}
		for j := uint64(0); j < count && r.err == nil; j++ {
			t.Names = append(t.Names, r.str())
		}
		n := count * uint64(t.Dim)
		if r.err == nil && (t.Dim < 0 || n > uint64(len(body)-r.off)/4) {
			r.fail("type %q: %d×%d floats do not fit", t.Name, count, t.Dim)
		}
		if r.err != nil {
			break
		}
		t.Emb = make([]float32, n)
		for k := range t.Emb {
			t.Emb[k] = math.Float32frombits(binary.LittleEndian.Uint32(body[r.off:]))
			r.off += 4
		}
		out = append(out, t)
	}
	if r.err == nil && r.off != len(body) {
		r.fail("%d trailing bytes", len(body)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
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

func (r *reader) str() string {
	n := r.u32()
	if !r.need(int(n)) {
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}
