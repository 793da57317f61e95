package edgestore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Version is the storage format version written in every bucket header and
// manifest. Readers refuse any other version (invariant 1).
const Version = 1

// HeaderSize is the size of a bucket file's header; the columns follow it.
const HeaderSize = 64

var magic = [8]byte{'B', 'P', 'E', 'D', 'G', 'E', 'S', 0}

// Header flags.
const flagWeights = 1

// castagnoli is the CRC32C table used for every checksum of the format.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Column names, in file order. "weight" is present only when the edge set
// has weights.
const (
	ColLhs     = "lhs"
	ColRhs     = "rhs"
	ColRel     = "rel"
	ColWeight  = "weight"
	ColOrdinal = "ordinal"
)

// Columns returns the column names of an edge set, in file order.
func Columns(weights bool) []string {
	if weights {
		return []string{ColLhs, ColRhs, ColRel, ColWeight, ColOrdinal}
	}
	return []string{ColLhs, ColRhs, ColRel, ColOrdinal}
}

// colWidth is the byte size of one value of a column.
func colWidth(name string) int64 {
	if name == ColOrdinal {
		return 8
	}
	return 4
}

// Header is the fixed-size header of a bucket file:
//
//	offset size field
//	0      8    magic "BPEDGES\x00"
//	8      4    format version (uint32)
//	12     4    flags (bit 0: weight column present)
//	16     8    number of edges n (uint64)
//	24     4    lhs partition (uint32)
//	28     4    rhs partition (uint32)
//	32     28   zero
//	60     4    CRC32C of bytes [0, 60)
//
// All integers are little-endian.
type Header struct {
	Weights  bool
	Edges    uint64
	Lhs, Rhs uint32
}

// Encode returns the 64 header bytes.
func (h Header) Encode() []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	binary.LittleEndian.PutUint32(b[8:], Version)
	if h.Weights {
		binary.LittleEndian.PutUint32(b[12:], flagWeights)
	}
	binary.LittleEndian.PutUint64(b[16:], h.Edges)
	binary.LittleEndian.PutUint32(b[24:], h.Lhs)
	binary.LittleEndian.PutUint32(b[28:], h.Rhs)
	binary.LittleEndian.PutUint32(b[60:], crc(b[:60]))
	return b
}

// DecodeHeader parses and checks a bucket header.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("header is %d bytes, want %d", len(b), HeaderSize)
	}
	b = b[:HeaderSize]
	if [8]byte(b[:8]) != magic {
		return Header{}, fmt.Errorf("not a batchprep bucket file (bad magic %q)", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[60:]), crc(b[:60]); got != want {
		return Header{}, fmt.Errorf("header checksum mismatch (stored %08x, computed %08x)", got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		return Header{}, fmt.Errorf("format version %d, this build reads version %d", v, Version)
	}
	flags := binary.LittleEndian.Uint32(b[12:])
	if flags&^flagWeights != 0 {
		return Header{}, fmt.Errorf("unknown header flags %#x", flags)
	}
	for _, x := range b[32:60] {
		if x != 0 {
			return Header{}, fmt.Errorf("reserved header bytes are not zero")
		}
	}
	return Header{
		Weights: flags&flagWeights != 0,
		Edges:   binary.LittleEndian.Uint64(b[16:]),
		Lhs:     binary.LittleEndian.Uint32(b[24:]),
		Rhs:     binary.LittleEndian.Uint32(b[28:]),
	}, nil
}

// columnOffset returns the byte offset of column name in a bucket file of n
// edges, and the file's total size.
func layout(n int64, weights bool) (offsets map[string]int64, size int64) {
	offsets = map[string]int64{}
	off := int64(HeaderSize)
	for _, c := range Columns(weights) {
		offsets[c] = off
		off += n * colWidth(c)
	}
	return offsets, off
}

// BucketFile is the name of bucket (lhs, rhs)'s file inside an edge set
// directory.
func BucketFile(lhs, rhs int) string { return fmt.Sprintf("edges_%d_%d.bin", lhs, rhs) }
