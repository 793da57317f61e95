package importer

import (
	"hash/maphash"
	"strconv"
	"unsafe"

	"github.com/batchprep/batchprep/internal/kern"
)

// Integer ids (Parquet INT32 and INT64 columns) name the entities of their
// decimal digits, so that a Parquet file and a text file of the same edges
// give the same store. Formatting and hashing each id's digits for every
// row was the Parquet import's largest cost, so a dictionary also keeps an
// index keyed by the integer itself: an open-addressing table (linear
// probing, load at most 1/2) from the int64 to the entity's id.
//
// The integer index is a cache of the name table, never the authority: an
// entity a text file added (as "42") is not in it until an integer row
// misses, formats 42, finds "42" in the name table and caches it. Every new
// entity goes into the name table first, so ids stay in first appearance
// order and the names file is the same whatever the mix of files. Unsigned
// INT64 columns, whose values past 2^63-1 have no int64 key of their own,
// take the name path.

// islot is a slot of the integer index.
type islot struct {
	key int64
	id1 uint32 // the entity's id + 1; 0: empty
}

// minInts is the integer index's smallest size (slots).
const minInts = 1024

// intHash mixes an integer id with the dictionaries' integer seed (the
// finalizer of MurmurHash3: every input bit reaches every output bit).
func intHash(seed uint64, x int64) uint64 {
	h := uint64(x) ^ seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// lookupInt returns the id of the entity named by key's decimal digits if
// the integer index holds it (h = intHash(d.iseed, key)).
func (d *dict) lookupInt(key int64, h uint64) (uint32, bool) {
	if d.ints == nil {
		return 0, false
	}
	for i := h & d.imask; ; i = (i + 1) & d.imask {
		s := &d.ints[i]
		if s.id1 == 0 {
			return 0, false
		}
		if s.key == key {
			return s.id1 - 1, true
		}
	}
}

// insertInt records that key names entity id (a no-op if it is known).
func (d *dict) insertInt(key int64, h uint64, id uint32) {
	if d.ints == nil {
		d.rebuildInts(max(minInts, ceilPow2(2*len(d.names))))
	}
	for i := h & d.imask; ; i = (i + 1) & d.imask {
		s := &d.ints[i]
		if s.id1 == 0 {
			*s = islot{key: key, id1: id + 1}
			d.nints++
			if 2*d.nints > len(d.ints) {
				d.rebuildInts(2 * len(d.ints))
			}
			return
		}
		if s.key == key {
			return
		}
	}
}

// rebuildInts makes an integer index of size slots holding the present
// entries.
func (d *dict) rebuildInts(size int) {
	old := d.ints
	d.ints = make([]islot, size)
	adviseHuge(d.ints)
	d.imask = uint64(size - 1)
	for _, s := range old {
		if s.id1 == 0 {
			continue
		}
		for i := intHash(d.iseed, s.key) & d.imask; ; i = (i + 1) & d.imask {
			if d.ints[i].id1 == 0 {
				d.ints[i] = s
				break
			}
		}
	}
}

// ceilPow2 returns the smallest power of two >= n (n >= 1).
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// intSide resolves one side of an edge with an integer id in pass B: the
// integer index first; on a miss, the id's decimal name in the name table
// (found: cached in the integer index). It returns what the name path of
// finish needs: the id if found, else the name (in buf), its hash and
// prefix, and the empty slot for addAt.
func intSide(d *dict, key int64, ih uint64, buf *[]byte) (id uint32, ok bool, name []byte, h, pre, at uint64) {
	if id, ok = d.lookupInt(key, ih); ok {
		return id, true, nil, 0, 0, 0
	}
	*buf = strconv.AppendInt((*buf)[:0], key, 10)
	name = *buf
	h, pre = maphash.Bytes(d.seed, name), prefix(name)
	id, ok, at = d.lookupHash(name, h, pre)
	if ok {
		d.insertInt(key, ih, id)
	}
	return id, ok, name, h, pre, at
}

// touchIntSlot prefetches, for an integer id the integer index does not
// hold (a new entity, mostly), the name table slot intSide will probe
// with its decimal name; its index slot was prefetched by touchFar.
// Formatting and hashing the name twice costs less than the cache miss.
func touchIntSlot(d *dict, key int64, ih uint64) {
	if _, ok := d.lookupInt(key, ih); ok {
		return
	}
	var buf [20]byte
	name := strconv.AppendInt(buf[:0], key, 10)
	kern.PrefetchLine(unsafe.Pointer(&d.slots[maphash.Bytes(d.seed, name)&d.mask]))
}
