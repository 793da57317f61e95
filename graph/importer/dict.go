package importer

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync/atomic"
	"unsafe"
)

// dict is one entity type's dictionary: names in first appearance order and
// their ids. After partitioning, part and off give each id's partition and
// offset inside it.
//
// The lookup table is an open-addressing hash table (linear probing, load
// at most 1/2) of 16-byte slots that hold the id, a tag (hash bits and
// length) and the first 8 bytes of the name, so that looking up a name of
// at most 8 bytes (Freebase ids, SNAP node numbers) touches one cache line;
// longer names are compared with names[id]. A Go map costs two or three
// cache misses per lookup, which made it the import's bottleneck. The
// table's layout never affects the output: ids are given in first
// appearance order. The names' bytes live in large arena blocks (one
// allocation per block rather than per name).
type dict struct {
	typ   string
	names []string // point into the arena blocks
	arena []byte   // the current block; earlier bytes are never written again
	loc   []uint64 // after partitioning: partition<<32 | offset, by id

	slots    []slot
	mask     uint64
	placed   int                       // names[:placed] are in slots; the rest are not (dict_int.go)
	pub      atomic.Pointer[slotTable] // slots and mask, for readers on other goroutines (dict_shared.go)
	pubNames atomic.Pointer[[]string]  // names' array, for the same readers
	seed     maphash.Seed
	grows    int // times the table grew while names were added (tests)

	// The integer index (dict_int.go): nil until an integer id is looked up.
	ints  []islot
	imask uint64
	nints int
	iseed uint64 // intHash's seed, the same for every dictionary
}

type slot struct {
	tag uint32 // 0: empty; else hash bits with the low 4 bits = min(len, 15)
	id  uint32
	pre uint64 // the first 8 bytes of the name, zero-padded, little-endian
}

func newDict(typ string) *dict {
	d := &dict{typ: typ, seed: maphash.MakeSeed()}
	d.slots = make([]slot, 1024)
	d.mask = uint64(len(d.slots) - 1)
	d.pub.Store(&slotTable{slots: d.slots, mask: d.mask})
	return d
}

func (d *dict) full() bool { return len(d.names) >= math.MaxUint32 }

func prefix(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var x [8]byte
	copy(x[:], b)
	return binary.LittleEndian.Uint64(x[:])
}

func tagOf(h uint64, n int) uint32 {
	t := uint32(h>>32)&^15 | uint32(min(n, 15))
	if t == 0 {
		t = 16 // never 0 (empty); names are never empty, so this is unreachable
	}
	return t
}

// lookup returns the id of name and whether it is present; when absent,
// the returned hash is to be passed to insert.
func (d *dict) lookup(name []byte) (id uint32, ok bool, h uint64) {
	h = maphash.Bytes(d.seed, name)
	id, ok, _ = d.lookupHash(name, h, prefix(name))
	return id, ok, h
}

// lookupHash is lookup with the name's hash and prefix already computed.
// When the name is absent, at is the empty slot where the probe stopped
// (for addAt).
func (d *dict) lookupHash(name []byte, h, pre uint64) (id uint32, ok bool, at uint64) {
	if d.placed != len(d.names) {
		d.placeRest()
	}
	tag := tagOf(h, len(name))
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		s := &d.slots[i]
		if s.tag == 0 {
			return 0, false, i
		}
		if s.tag == tag && s.pre == pre && (len(name) <= 8 || d.names[s.id] == string(name)) {
			return s.id, true, 0
		}
	}
}

// add inserts a name known to be absent (h from lookup) and returns its id.
func (d *dict) add(name []byte, h uint64) uint32 {
	if d.placed != len(d.names) {
		d.placeRest()
	}
	id := uint32(len(d.names))
	d.appendName(name)
	if 2*len(d.names) > len(d.slots) {
		d.grow()
	}
	d.place(h, len(name), prefix(name), id)
	d.placed = len(d.names)
	return id
}

// addAt is add with the empty slot where lookupHash stopped, which saves
// a second probe: nothing may have been inserted since that lookup (the
// probe passed no other empty slot, so the name belongs there). If the
// table grows, the name is placed by a new probe. With at = unplaced
// (intSide: a new integer id) the name is added to names only.
func (d *dict) addAt(name []byte, h uint64, at uint64) uint32 {
	id := uint32(len(d.names))
	if at == unplaced {
		d.appendName(name)
		return id
	}
	if d.placed != len(d.names) { // an unplaced name came since the lookup
		return d.add(name, h)
	}
	d.appendName(name)
	if 2*len(d.names) > len(d.slots) {
		d.grow()
		d.place(h, len(name), prefix(name), id)
	} else {
		d.slots[at].set(tagOf(h, len(name)), id, prefix(name))
	}
	d.placed = len(d.names)
	return id
}

// arenaBlock is the size of the blocks the names are copied into.
const arenaBlock = 1 << 20

// intern copies name into the arena and returns it as a string.
func (d *dict) intern(name []byte) string {
	if len(name) == 0 {
		return ""
	}
	if len(name) > cap(d.arena)-len(d.arena) {
		d.arena = make([]byte, 0, max(arenaBlock, len(name)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, name...)
	return unsafe.String(&d.arena[start], len(name))
}

func (d *dict) place(h uint64, n int, pre uint64, id uint32) {
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		if d.slots[i].tag == 0 {
			d.slots[i].set(tagOf(h, n), id, pre)
			return
		}
	}
}

// grow doubles the table and re-places every name but the last (which the
// caller places).
func (d *dict) grow() {
	d.grows++
	d.rebuild(2*len(d.slots), len(d.names)-1)
}

// reserve makes room for n names without growing. While every name came
// by integer id (intOnly) only the integer index grows: the name table
// may never be needed, and placeRest sizes it if it is.
func (d *dict) reserve(n int) {
	size := len(d.slots)
	for size < 2*n {
		size *= 2
	}
	if d.ints != nil && size > len(d.ints) {
		d.rebuildInts(size)
	}
	if size > len(d.slots) && !(d.ints != nil && d.intOnly()) {
		d.rebuild(size, len(d.names))
	}
}

// rebuild makes a table of size slots holding the first n names.
func (d *dict) rebuild(size, n int) {
	slots := make([]slot, size)
	adviseHuge(slots)
	mask := uint64(len(slots) - 1)
	// The new table is not published yet: plain stores.
	for id, s := range d.names[:n] {
		b := []byte(s)
		h := maphash.Bytes(d.seed, b)
		i := h & mask
		for slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		slots[i] = slot{tag: tagOf(h, len(b)), id: uint32(id), pre: prefix(b)}
	}
	d.slots, d.mask, d.placed = slots, mask, n
	d.pub.Store(&slotTable{slots: slots, mask: mask})
}
