package importer

import (
	"hash/maphash"
	"unsafe"

	"github.com/batchprep/batchprep/internal/kern"
)

// Dictionary-encoded entity columns (how Spark, DuckDB and parquet-go
// write strings) are not resolved name by name. Pass A hands pass B each
// row's index into the column chunk's dictionary, and a pqDict per
// dictionary; pass B keeps, per dictionary and per entity dictionary the
// rows are looked up in, the entity id of each dictionary value once it
// has been seen (ord). A row whose value was seen before in the column
// chunk costs one array read; only a value's first row in the chunk is
// looked up by name (hash and prefix computed by pass A, once per
// dictionary value) and, if absent, added. Since pass B runs in row order
// and resolves a value only when a row reaches it, new entities get their
// ids in first appearance order, as with text: the store is the same
// whatever the encoding. Rows of plain pages (a writer falls back to PLAIN
// once its dictionary grows past a size limit, mid-chunk) keep their
// names and take the name path.

// pqDict is a dictionary of a column chunk of entity names. names, dh
// and empty are written by pass A before any row points to the pqDict and
// never change; the ids (d0, ord, ords) are pass B's alone.
type pqDict struct {
	names []byte       // the values' bytes
	dh    []dictHashes // by dictionary index: hash, prefix and place in names
	empty bool         // some value is the empty string
	// The ids in the first entity dictionary a row of this pqDict was
	// looked up in: 4 bytes a value, so that the ids of a row group's
	// values stay in the core's cache while the rows read them in random
	// order.
	d0   *dict
	ord  []uint32
	ords []dictOrd // the ids in the other entity dictionaries, if any
	// Written by pass A before any row points to the pqDict, then only
	// read: the id + 1 in preIn of each value preIn held then (0: not
	// found, left to pass B; dict_shared.go).
	pre   []uint32
	preIn *dict
}

// dictOrd is the entity ids of a dictionary's values in one entity
// dictionary: id+1, 0 until a row resolved the value.
type dictOrd struct {
	d   *dict
	id1 []uint32
}

// idOf returns where the id + 1 of value x in d is kept (0: not resolved
// yet).
func (q *pqDict) idOf(x int32, d *dict) *uint32 {
	if q.d0 == d {
		return &q.ord[x]
	}
	return q.idOfSlow(x, d)
}

// idOfSlow is idOf for the first row, and for the entity dictionaries
// after the first (the relations of one column may have different entity
// types).
func (q *pqDict) idOfSlow(x int32, d *dict) *uint32 {
	if q.d0 == nil {
		q.d0, q.ord = d, make([]uint32, len(q.dh))
		return &q.ord[x]
	}
	for i := range q.ords {
		if q.ords[i].d == d {
			return &q.ords[i].id1[x]
		}
	}
	o := make([]uint32, len(q.dh))
	q.ords = append(q.ords, dictOrd{d: d, id1: o})
	return &o[x]
}

// dictSide resolves one side of an edge with dictionary index x of q in
// pass B. A value resolved before is found at slot; otherwise it returns
// what the name path of finish needs (the name, its hash and prefix, and
// the empty slot for addAt when absent), and caches a found id. The
// caller sets *slot once it adds an absent name.
func dictSide(q *pqDict, x int32, d *dict) (slot *uint32, id uint32, ok bool, name []byte, h, pre, at uint64) {
	slot = q.idOf(x, d)
	if v := *slot; v != 0 {
		return slot, v - 1, true, nil, 0, 0, 0
	}
	dh := &q.dh[x]
	name = q.names[dh.lo:dh.hi:dh.hi]
	id, ok, at = d.lookupHash(name, dh.h, dh.pre)
	if ok {
		*slot = id + 1
	}
	return slot, id, ok, name, dh.h, dh.pre, at
}

// Pass B resolves a row's dictionary side in up to three dependent reads:
// its id (resolved rows stop there), its hash, the name table slot. flush
// prefetches each a stage ahead of the next: touchFar (3*prefetchAhead
// rows ahead), touchMid (2*prefetchAhead), touch (prefetchAhead).

// touchFar prefetches what a Parquet row's sides read first: the ids of
// dictionary values, the integer index slots of integer ids.
func (e *pending) touchFar() {
	d0, d1 := e.dicts[0], e.dicts[1]
	if d0 == nil {
		return
	}
	if e.ld != nil {
		kern.PrefetchLine(unsafe.Pointer(e.ld.idOf(e.lx, d0)))
	} else if e.lint && d0.ints != nil {
		kern.PrefetchLine(unsafe.Pointer(&d0.ints[e.hl&d0.imask]))
	}
	if e.rd != nil {
		kern.PrefetchLine(unsafe.Pointer(e.rd.idOf(e.rx, d1)))
	} else if e.rint && d1.ints != nil {
		kern.PrefetchLine(unsafe.Pointer(&d1.ints[e.hr&d1.imask]))
	}
}

// touchMid prefetches the hashes of dictionary values not resolved yet.
func (e *pending) touchMid() {
	if e.ld != nil && e.dicts[0] != nil && *e.ld.idOf(e.lx, e.dicts[0]) == 0 {
		kern.PrefetchLine(unsafe.Pointer(&e.ld.dh[e.lx]))
	}
	if e.rd != nil && e.dicts[1] != nil && *e.rd.idOf(e.rx, e.dicts[1]) == 0 {
		kern.PrefetchLine(unsafe.Pointer(&e.rd.dh[e.rx]))
	}
}

// touchDictSlot prefetches the name table slot a dictionary side not
// resolved yet will probe.
func touchDictSlot(q *pqDict, x int32, d *dict) {
	if *q.idOf(x, d) == 0 {
		kern.PrefetchLine(unsafe.Pointer(&d.slots[q.dh[x].h&d.mask]))
	}
}

// emptyName tells whether row i's name is empty (cv an entity or
// relation column). Rows of a dictionary without an empty value are not
// looked at: reading their hashes would cost a cache miss per row.
func (cv *colVals) emptyName(i int) bool {
	if cv.pd != nil && cv.dx[i] >= 0 {
		if !cv.pd.empty {
			return false
		}
		d := &cv.pd.dh[cv.dx[i]]
		return d.hi == d.lo
	}
	return len(cv.name[i]) == 0
}

// hashes makes the pqDict of the page's dictionary: the hash and prefix
// of every value, once per dictionary, so that rows carry indexes instead
// of names (see parquet_dict.go).
func (c *cursor) hashes() {
	if c.pd != nil && len(c.pd.dh) == c.nd && (same(c.bytes, c.dictData) || same(c.i64, c.dictI64) || same(c.i32, c.dictI32)) {
		return // the same dictionary as the previous page
	}
	c.dictData, c.dictI64, c.dictI32 = nil, nil, nil
	// A new pqDict each time: batches in flight still point to the last.
	pd := &pqDict{dh: make([]dictHashes, 0, c.nd)}
	c.pd = pd
	if c.col.kind == kindBytes {
		c.dictData = c.bytes
		pd.names = c.bytes
		for v := range c.nd {
			lo, hi := c.offs[v], c.offs[v+1]
			if lo > hi {
				lo, hi = 0, 0 // corrupt offsets: an empty name, reported as such
			}
			b := c.bytes[lo:hi]
			pd.empty = pd.empty || lo == hi
			pd.dh = append(pd.dh, dictHashes{h: maphash.Bytes(*c.seed, b), pre: prefix(b), lo: lo, hi: hi})
		}
	} else {
		c.intNames(pd)
	}
	if c.resolveIn != nil {
		pd.preResolve(c.resolveIn)
	}
}

// intNames fills pd with the decimal names of the page's integer
// dictionary and their hashes.
func (c *cursor) intNames(pd *pqDict) {
	// Integers: their decimal names, written once per dictionary.
	c.dictI64, c.dictI32 = c.i64, c.i32
	names := make([]byte, 0, 8*c.nd)
	for v := range c.nd {
		lo := len(names)
		names = c.appendID(names, v)
		b := names[lo:]
		pd.dh = append(pd.dh, dictHashes{h: maphash.Bytes(*c.seed, b), pre: prefix(b), lo: uint32(lo), hi: uint32(len(names))})
	}
	pd.names = names
}

// same tells whether a and b are the same non-empty slice.
func same[T any](a, b []T) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}
