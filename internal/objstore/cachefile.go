package objstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A cache file holds one block of an object followed by a trailer:
//
//	data | CRC-32C of each piece of data | key[:8] | uint32 length |
//	uint32 CRC-32C of the piece CRCs | "bpc2"
//
// (integers little-endian). A piece is pieceLen bytes of data (the last
// one shorter), so that a read of part of a block reads and checks only
// the pieces it covers. The key prefix catches a file that landed under
// the wrong name; the length catches truncation; the piece checksums
// catch bit rot, and their own checksum a damaged table.
const (
	pieceLen    = 64 << 10
	tailLen     = 20 // key prefix, length, table CRC, mark
	cacheMagic  = "bpc2"
	keyCheckLen = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadCacheFile is the cause of every decode failure.
var errBadCacheFile = errors.New("objstore: bad cache file")

// pieces is how many pieces n bytes of data have.
func pieces(n int64) int64 { return (n + pieceLen - 1) / pieceLen }

// trailerLen is the length of the trailer of a block of n bytes.
func trailerLen(n int64) int64 { return 4*pieces(n) + tailLen }

// appendTrailer returns the trailer for data stored under key.
func appendTrailer(dst []byte, key [32]byte, data []byte) []byte {
	start := len(dst)
	for off := 0; off < len(data); off += pieceLen {
		dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(data[off:min(off+pieceLen, len(data))], castagnoli))
	}
	table := crc32.Checksum(dst[start:], castagnoli)
	dst = append(dst, key[:keyCheckLen]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
	dst = binary.LittleEndian.AppendUint32(dst, table)
	return append(dst, cacheMagic...)
}

// decodeTrailer checks the trailer t of a block stored under key, which
// must hold want bytes, and returns its piece checksums (a sub-slice of t).
func decodeTrailer(t []byte, key [32]byte, want int64) ([]byte, error) {
	if want < 0 || int64(len(t)) != trailerLen(want) {
		return nil, fmt.Errorf("%w: a trailer of %d bytes for a block of %d", errBadCacheFile, len(t), want)
	}
	table, tail := t[:len(t)-tailLen], t[len(t)-tailLen:]
	switch {
	case string(tail[16:]) != cacheMagic:
		return nil, fmt.Errorf("%w: no trailer mark", errBadCacheFile)
	case string(tail[:keyCheckLen]) != string(key[:keyCheckLen]):
		return nil, fmt.Errorf("%w: it holds another block", errBadCacheFile)
	case int64(binary.LittleEndian.Uint32(tail[8:])) != want:
		return nil, fmt.Errorf("%w: trailer says %d data bytes, want %d", errBadCacheFile, binary.LittleEndian.Uint32(tail[8:]), want)
	case binary.LittleEndian.Uint32(tail[12:]) != crc32.Checksum(table, castagnoli):
		return nil, fmt.Errorf("%w: its checksum table is damaged", errBadCacheFile)
	}
	return table, nil
}

// checkPieces checks data, the pieces from the first-th on (whole pieces,
// the last one possibly the block's short last piece), against table.
func checkPieces(data []byte, first int64, table []byte) error {
	for off, p := 0, first; off < len(data); off, p = off+pieceLen, p+1 {
		if 4*p+4 > int64(len(table)) || binary.LittleEndian.Uint32(table[4*p:]) != crc32.Checksum(data[off:min(off+pieceLen, len(data))], castagnoli) {
			return fmt.Errorf("%w: checksum mismatch in piece %d", errBadCacheFile, p)
		}
	}
	return nil
}
