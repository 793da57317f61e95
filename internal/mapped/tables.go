// Package mapped keeps a corpus index's per-sequence tables (uint32 counts
// and offsets, one table after another) in a file mapped into memory and
// pages them by chunk: a reader keeps resident about the tables of the
// chunks it holds, not the whole index (corpus.Pager). Spill writes such
// tables while an index pass produces them, a chunk at a time.
package mapped

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// PageSize is the granularity of the tables' layout: each table starts at
// a multiple of it.
const PageSize = 4096

// Pad is the number of zeros that bring n to a multiple of PageSize.
func Pad(n int) int { return (PageSize - n%PageSize) % PageSize }

// Tables pages the per-sequence tables of a mapped file by chunk: table k
// starts at byte Off[k] of the file and holds one uint32 per sequence;
// chunk c holds sequences [ChunkStart[c], ChunkStart[c+1]). It implements
// corpus.Pager.
type Tables struct {
	File       *File
	Off        []int
	ChunkStart []int
	released   atomic.Int64 // table bytes released since all were
}

// ReleaseAllAfter is the bytes of tables released chunk by chunk after
// which Release releases all of them (an eighth of the tables when less).
const ReleaseAllAfter = 8 << 20

// Release lets chunk c's tables leave the resident set. They stay in the
// page cache (evicting them there chunk by chunk costs more than it
// saves), where a fault nearby could map them back (the kernel maps the
// cached pages around a fault): so once the chunks released add up to
// ReleaseAllAfter bytes of tables, all the tables leave the resident set
// and the page cache; the pages of the chunks in use come back when read.
func (t *Tables) Release(c int) {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	first, last := t.ChunkStart[c], t.ChunkStart[c+1]
	n := int64(4 * (last - first) * len(t.Off))
	tables := len(t.File.Bytes()) - t.Off[0]
	if t.released.Add(n) >= min(ReleaseAllAfter, int64(tables/8)) {
		t.ReleaseAll()
		return
	}
	for _, off := range t.Off {
		t.File.Release(off+4*first, 4*(last-first), false)
	}
}

// ReleaseAll lets every table leave the resident set and the page cache.
func (t *Tables) ReleaseAll() {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	t.released.Store(0)
	t.File.Release(t.Off[0], len(t.File.Bytes())-t.Off[0], true)
}

// Need starts reading chunk c's tables, and the next chunk's (file order
// reads it next, and a reader looks at sequence counts a little ahead of
// the chunks it loads), in the background.
func (t *Tables) Need(c int) {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	first, last := t.ChunkStart[c], t.ChunkStart[min(c+2, len(t.ChunkStart)-1)]
	for _, off := range t.Off {
		t.File.Need(off+4*first, 4*(last-first))
	}
}

// littleEndian is true on hosts whose uint32 layout is the tables'.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// U32s returns the n little-endian uint32 at the start of b: a view of b's
// memory when the host is little-endian and b is aligned, else a copy.
func U32s(b []byte, n int) []uint32 {
	if n == 0 {
		return []uint32{}
	}
	b = b[:4*n]
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}
