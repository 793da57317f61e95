package pqlz4

import (
	"errors"
	_ "unsafe" // for go:linkname

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// ErrDamaged is returned by Decode for bytes that are not an LZ4 block.
var ErrDamaged = errors.New("pqlz4: not an LZ4 block")

// Codec is the LZ4_RAW codec this package installs (invariants 1, 2, 4).
type Codec struct{}

func (Codec) String() string { return "LZ4_RAW" }

func (Codec) CompressionCodec() format.CompressionCodec { return format.Lz4Raw }

func (Codec) Encode(dst, src []byte) ([]byte, error) { return pq.Lz4Raw.Encode(dst, src) }

// maxRatio bounds what one compressed byte can stand for in an LZ4
// block: a length byte of 255 extends a run by 255 bytes.
const maxRatio = 255

// Decode decodes the LZ4 block src. A dst of non-zero length holds the
// page's declared uncompressed size, which for LZ4_RAW must be exact (the
// block does not record it; other readers decode into exactly that
// much): the block is decoded into dst's memory and fails if it does not
// fit. An empty dst has no size to go by: the output grows fourfold up to
// the largest an LZ4 block of src's length can give.
func (Codec) Decode(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	buf := dst[:cap(dst)]
	limit := maxRatio*len(src) + 64
	if len(dst) > 0 {
		limit = len(buf)
	}
	for {
		n, err := lz4.UncompressBlock(src, buf)
		if err == nil {
			return buf[:n], nil
		}
		if len(buf) >= limit {
			return dst[:0], ErrDamaged
		}
		buf = make([]byte, min(max(4*len(buf), 4*len(src), 4096), limit))
	}
}

// codecs is the library's table of codecs, indexed by their Parquet code.
// Its length is that of the library's array in v0.32.0; init checks the
// entries it can see before writing the one it replaces (invariant 3).
//
//go:linkname codecs github.com/parquet-go/parquet-go.compressionCodecs
var codecs [format.Lz4Raw + 1]compress.Codec

func init() {
	want := map[format.CompressionCodec]compress.Codec{
		format.Uncompressed: &pq.Uncompressed, format.Snappy: &pq.Snappy, format.Gzip: &pq.Gzip,
		format.Brotli: &pq.Brotli, format.Zstd: &pq.Zstd, format.Lz4Raw: &pq.Lz4Raw,
	}
	for code, c := range want {
		if codecs[code] != c || pq.LookupCompressionCodec(code) != c {
			panic("pqlz4: the codec table of github.com/parquet-go/parquet-go is not laid out as in v0.32.0; update internal/pqlz4")
		}
	}
	codecs[format.Lz4Raw] = Codec{}
}
