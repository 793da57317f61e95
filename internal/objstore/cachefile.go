package objstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A cache file holds one block of an object followed by a trailer:
//
//	data | key[:8] | uint32 length | uint32 CRC-32C of data | "bpc1"
//
// (integers little-endian). The key prefix catches a file that landed under
// the wrong name; the length and checksum catch truncation and bit rot.
const (
	trailerLen  = 20
	cacheMagic  = "bpc1"
	keyCheckLen = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadCacheFile is the cause of every decode failure.
var errBadCacheFile = errors.New("objstore: bad cache file")

// appendTrailer returns the trailer for data stored under key.
func appendTrailer(dst []byte, key [32]byte, data []byte) []byte {
	dst = append(dst, key[:keyCheckLen]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(data, castagnoli))
	return append(dst, cacheMagic...)
}

// decodeBlock checks a cache file's content against the key it was looked
// up by and the block length expected, and returns the data (a sub-slice
// of b) (invariant 8).
func decodeBlock(b []byte, key [32]byte, want int64) ([]byte, error) {
	if len(b) < trailerLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its trailer", errBadCacheFile, len(b))
	}
	data, t := b[:len(b)-trailerLen], b[len(b)-trailerLen:]
	switch {
	case string(t[16:]) != cacheMagic:
		return nil, fmt.Errorf("%w: no trailer mark", errBadCacheFile)
	case string(t[:keyCheckLen]) != string(key[:keyCheckLen]):
		return nil, fmt.Errorf("%w: it holds another block", errBadCacheFile)
	case int64(binary.LittleEndian.Uint32(t[8:])) != int64(len(data)) || int64(len(data)) != want:
		return nil, fmt.Errorf("%w: %d data bytes, trailer says %d, want %d", errBadCacheFile, len(data), binary.LittleEndian.Uint32(t[8:]), want)
	case binary.LittleEndian.Uint32(t[12:]) != crc32.Checksum(data, castagnoli):
		return nil, fmt.Errorf("%w: checksum mismatch", errBadCacheFile)
	}
	return data, nil
}
