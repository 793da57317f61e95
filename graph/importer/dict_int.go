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
// Ids are given in first appearance order whatever the mix of files: an
// entity a text file added (as "42") is not in the integer index until an
// integer row misses, formats 42, finds "42" in the name table and caches
// it. An integer that misses the index can only be new while every entity
// of the dictionary is in the index (intOnly: every name came by integer
// id, as in an import of integer files alone); such an entity goes into
// names and the index but not the name table (addAt with unplaced), which
// saves the formatting, hashing and a cache miss per new entity. The name
// table then holds names[:placed] only, and whatever looks a name up or
// adds one by name places the rest first (placeRest): an import that
// never looks a name up never builds the table. Unsigned INT64 columns,
// whose values past 2^63-1 have no int64 key of their own, take the name
// path.

// unplaced, as intSide's empty slot, says that a new entity goes into
// names but not into the name table.
const unplaced = ^uint64(0)

// intOnly tells whether every entity of d is in its integer index (an
// integer that misses the index is then new).
func (d *dict) intOnly() bool { return d.nints == len(d.names) }

// placeRest puts names[placed:] into the name table, growing it first if
// they would fill it past half.
func (d *dict) placeRest() {
	if 2*len(d.names) > len(d.slots) {
		d.rebuild(max(len(d.slots), ceilPow2(2*len(d.names))), len(d.names))
		return
	}
	for id := d.placed; id < len(d.names); id++ {
		s := d.names[id]
		b := unsafe.Slice(unsafe.StringData(s), len(s))
		d.place(maphash.Bytes(d.seed, b), len(b), prefix(b), uint32(id))
	}
	d.placed = len(d.names)
}

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

// addInt adds the entity of integer id key (hash h), known to be new, to
// names and the integer index but not the name table (d is intOnly), and
// returns its id.
func (d *dict) addInt(key int64, h uint64) uint32 {
	id := uint32(len(d.names))
	var buf [20]byte
	d.appendName(strconv.AppendInt(buf[:0], key, 10))
	d.insertInt(key, h, id)
	return id
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
// prefix, and the empty slot for addAt: unplaced, with no hash, when d is
// intOnly (the id is new and goes into names and the index only).
func intSide(d *dict, key int64, ih uint64, buf *[]byte) (id uint32, ok bool, name []byte, h, pre, at uint64) {
	if id, ok = d.lookupInt(key, ih); ok {
		return id, true, nil, 0, 0, 0
	}
	*buf = strconv.AppendInt((*buf)[:0], key, 10)
	name = *buf
	if d.intOnly() {
		return 0, false, name, 0, 0, unplaced
	}
	h, pre = maphash.Bytes(d.seed, name), prefix(name)
	id, ok, at = d.lookupHash(name, h, pre)
	if ok {
		d.insertInt(key, ih, id)
	}
	return id, ok, name, h, pre, at
}

// touchIntSlot prefetches, for an integer id the integer index does not
// hold (a new entity, mostly), the name table slot intSide will probe
// with its decimal name (none while the dictionary is intOnly); its index
// slot was prefetched by touchFar.
// Formatting and hashing the name twice costs less than the cache miss.
func touchIntSlot(d *dict, key int64, ih uint64) {
	if d.intOnly() {
		return // a miss is a new entity, which needs no name table slot
	}
	if _, ok := d.lookupInt(key, ih); ok {
		return
	}
	var buf [20]byte
	name := strconv.AppendInt(buf[:0], key, 10)
	kern.PrefetchLine(unsafe.Pointer(&d.slots[maphash.Bytes(d.seed, name)&d.mask]))
}
