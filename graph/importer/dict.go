package importer

import (
	"encoding/binary"
	"hash/maphash"
	"math"
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
// appearance order.
type dict struct {
	typ   string
	names []string
	part  []uint32
	off   []uint32

	slots []slot
	mask  uint64
	seed  maphash.Seed
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
	id, ok = d.lookupHash(name, h)
	return id, ok, h
}

// lookupHash is lookup with the name's hash already computed.
func (d *dict) lookupHash(name []byte, h uint64) (id uint32, ok bool) {
	tag, pre := tagOf(h, len(name)), prefix(name)
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		s := &d.slots[i]
		if s.tag == 0 {
			return 0, false
		}
		if s.tag == tag && s.pre == pre && (len(name) <= 8 || d.names[s.id] == string(name)) {
			return s.id, true
		}
	}
}

// add inserts a name known to be absent (h from lookup) and returns its id.
func (d *dict) add(name []byte, h uint64) uint32 {
	id := uint32(len(d.names))
	d.names = append(d.names, string(name))
	if 2*len(d.names) > len(d.slots) {
		d.grow()
	}
	d.place(h, len(name), prefix(name), id)
	return id
}

func (d *dict) place(h uint64, n int, pre uint64, id uint32) {
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		if d.slots[i].tag == 0 {
			d.slots[i] = slot{tag: tagOf(h, n), id: id, pre: pre}
			return
		}
	}
}

// grow doubles the table and re-places every name but the last (which the
// caller places).
func (d *dict) grow() {
	d.slots = make([]slot, 2*len(d.slots))
	d.mask = uint64(len(d.slots) - 1)
	for id, s := range d.names[:len(d.names)-1] {
		b := []byte(s)
		d.place(maphash.Bytes(d.seed, b), len(b), prefix(b), uint32(id))
	}
}
