// Package mapped keeps a corpus index's per-sequence tables (uint32 counts
// and offsets, one table after another) in a file mapped into memory and
// pages them by chunk: a reader keeps resident about the tables of the
// chunks it holds, not the whole index (corpus.Pager). Spill writes such
// tables while an index pass produces them, a chunk at a time.
package mapped

import (
	"encoding/binary"
	"slices"
	"sync"
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

	mu           sync.Mutex
	pendingBytes int64 // table bytes released since all left the resident set
	released     int64 // table bytes released in this generation
	gen          int   // counts generations
	// The chunks needed and not released since, with the generation of
	// their need.
	needed map[int]int
	// The chunks whose tables the last Need asked for, and the chunk it
	// was for.
	aheadFrom, aheadTo, lastNeed int
	// The chunks released: [0] in this generation, [1] in the one before.
	gens [2][]int
}

// EvictAfter is the bytes of tables released that make a generation (an
// eighth of the tables when less); see Release.
const EvictAfter = 8 << 20

// Release lets chunk c's tables leave the resident set. They stay in the
// page cache (evicting them there chunk by chunk costs more than it
// saves), where a fault nearby could map them back (the kernel maps the
// cached pages around a fault): so once the chunks released add up to a
// batch (ReleaseBatch bytes of tables, or a 64th of them when less), every
// table leaves the resident set, in one call. The chunks released are also
// counted in generations of EvictAfter bytes (an eighth of the tables
// when less): when one is full, the tables of the chunks released in the
// one before leave the page cache too, in runs of consecutive chunks,
// except those needed again since. The tables of the chunks a reader is
// about to read (needed ahead, see Need) or has just read stay cached:
// evicting every table at once would make each of them a read from the
// disk, waited for in the middle of a parse.
func (t *Tables) Release(c int) {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	first, last := t.ChunkStart[c], t.ChunkStart[c+1]
	for _, off := range t.Off {
		t.File.Release(off+4*first, 4*(last-first), false)
	}
	tables := len(t.File.Bytes()) - t.Off[0]
	t.mu.Lock()
	delete(t.needed, c)
	t.gens[0] = append(t.gens[0], c)
	n := int64(4 * (last - first) * len(t.Off))
	t.pendingBytes += n
	t.released += n
	batch := t.pendingBytes >= min(ReleaseBatch, int64(max(tables/64, 1)))
	if batch {
		t.pendingBytes = 0
	}
	var evict []int
	if t.released >= min(EvictAfter, int64(max(tables/8, 1))) {
		for _, c := range t.gens[1] {
			if _, ok := t.needed[c]; !ok {
				evict = append(evict, c)
			}
		}
		// Needs two generations old are forgotten (a chunk needed and never
		// read, as a seek leaves behind): the map holds about the chunks of
		// two generations.
		for c, g := range t.needed {
			if g < t.gen-1 {
				delete(t.needed, c)
			}
		}
		t.gens[1], t.gens[0] = t.gens[0], t.gens[1][:0]
		t.released = 0
		t.gen++
	}
	t.mu.Unlock()
	if batch {
		// Every table leaves the resident set, released or not (pages
		// mapped by faults nearby, or read for chunks still to come), in
		// one call; those in use come back from the page cache, without a
		// read.
		t.File.Release(t.Off[0], tables, false)
	}
	t.eachRun(evict, t.File.Evict)
}

// ReleaseBatch is the bytes of tables Release lets go at once.
const ReleaseBatch = 1 << 20

// eachRun calls fn with each table's range of each run of consecutive
// chunks in cs.
func (t *Tables) eachRun(cs []int, fn func(off, n int)) {
	slices.Sort(cs)
	cs = slices.Compact(cs)
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j] == cs[j-1]+1 {
			j++
		}
		first, last := t.ChunkStart[cs[i]], t.ChunkStart[cs[j-1]+1]
		for _, off := range t.Off {
			fn(off+4*first, 4*(last-first))
		}
		i = j
	}
}

// ReleaseAll lets every table leave the resident set and the page cache.
func (t *Tables) ReleaseAll() {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	t.mu.Lock()
	t.released, t.pendingBytes, t.needed = 0, 0, nil
	t.aheadFrom, t.aheadTo = 0, 0
	t.gens[0], t.gens[1] = t.gens[0][:0], t.gens[1][:0]
	t.mu.Unlock()
	t.File.Release(t.Off[0], len(t.File.Bytes())-t.Off[0], true)
}

// Need starts reading chunk c's tables, and the next chunk's (file order
// reads it next, and a reader looks at sequence counts a little ahead of
// the chunks it loads), in the background; c's stay in the page cache
// until it is released again (see Release). Needs of consecutive chunks
// read NeedAhead chunks' tables at a time, with one system call per table
// where one per chunk would cost as much as the reads.
func (t *Tables) Need(c int) {
	if t == nil || t.File == nil || len(t.Off) == 0 {
		return
	}
	chunks := len(t.ChunkStart) - 1
	from, to := c, min(c+2, chunks)
	t.mu.Lock()
	if t.needed == nil {
		t.needed = map[int]int{}
	}
	if _, ok := t.needed[c]; ok {
		// Asked for already (a prefetch, then the load) and not released
		// since: its tables are cached or on their way.
		t.needed[c] = t.gen
		t.mu.Unlock()
		return
	}
	t.needed[c] = t.gen
	switch {
	case c >= t.aheadFrom && to <= t.aheadTo:
		from = to // asked for already
	case c == t.lastNeed+1:
		to = min(c+NeedAhead, chunks)
		t.aheadFrom, t.aheadTo = c, to
	default:
		t.aheadFrom, t.aheadTo = c, to
	}
	t.lastNeed = c
	t.mu.Unlock()
	if from >= to {
		return
	}
	first, last := t.ChunkStart[from], t.ChunkStart[to]
	for _, off := range t.Off {
		t.File.Need(off+4*first, 4*(last-first))
	}
}

// NeedAhead is how many chunks' tables Need reads at once when chunks are
// needed in file order.
const NeedAhead = 16

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
