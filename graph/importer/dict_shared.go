package importer

import (
	"sync/atomic"
	"unsafe"

	"github.com/batchprep/batchprep/internal/kern"
)

// A dictionary has one writer, pass B, which alone gives ids, in first
// appearance order. Pass A's decoders, on other goroutines, may look names
// up in it while pass B writes (lookupShared), to resolve the values of a
// Parquet dictionary that the entity dictionary already holds before pass
// B reaches their rows: once as a row group starts (preResolve), and the
// values not found again once pass B is done with the row group before
// (resolveAgain), since the first time may come before pass B has added
// the names of the previous row groups (the second row group starts with
// the first). What makes that safe without a lock:
//
//  1. A slot is written once, from empty to filled, and never changed:
//     pass B writes its prefix first, then its tag and id as one atomic
//     64-bit store (set). A reader loads tag and id atomically and reads
//     the prefix only when the tag is set, so it sees a whole slot or an
//     empty one.
//  2. A grown table is filled before it is published (pub); pass B never
//     writes a table again once it has replaced it, so a reader holding an
//     old table reads a frozen subset of the names.
//  3. An entity's id never changes once given. A name a reader finds has
//     the id pass B would find; a name it does not find may be absent or
//     added since, and is left to pass B, which looks it up again in row
//     order. So which names a reader finds changes only how much work is
//     left to pass B, never an id.
//  4. A name is in names (and its bytes in the arena) before its slot is
//     set. names is published (pubNames) whenever append moves it, before
//     the slot of the name that moved it is set, so a reader that found an
//     id in a slot and then loads pubNames finds the name there (an array
//     append left behind is never written again).

// slotTable is a dictionary's table as published to readers.
type slotTable struct {
	slots []slot
	mask  uint64
}

// set fills an empty slot that readers may be probing (rule 1). The tag
// and id are the slot's first 8 bytes, stored as one word (in memory
// order, so that plain reads of s.tag and s.id agree on any byte order).
func (s *slot) set(tag, id uint32, pre uint64) {
	s.pre = pre
	var w uint64
	h := (*[2]uint32)(unsafe.Pointer(&w))
	h[0], h[1] = tag, id
	atomic.StoreUint64((*uint64)(unsafe.Pointer(s)), w)
}

// load reads a slot's tag and id as set wrote them.
func (s *slot) load() (tag, id uint32) {
	w := atomic.LoadUint64((*uint64)(unsafe.Pointer(s)))
	h := (*[2]uint32)(unsafe.Pointer(&w))
	return h[0], h[1]
}

// appendName appends name (copied into the arena) to d.names, and
// publishes the array when append moved it (rule 4).
func (d *dict) appendName(name []byte) {
	c := cap(d.names)
	d.names = append(d.names, d.intern(name))
	if cap(d.names) != c {
		all := d.names[:cap(d.names)]
		d.pubNames.Store(&all)
	}
}

// lookupShared looks up name, with hash h and prefix pre, in d's table t
// from any goroutine (see above). It returns the name's id + 1, or 0 when t
// does not hold it.
func (d *dict) lookupShared(t *slotTable, name []byte, h, pre uint64) uint32 {
	want := tagOf(h, len(name))
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		tag, id := s.load()
		if tag == 0 {
			return 0
		}
		if tag == want && s.pre == pre && (len(name) <= 8 || (*d.pubNames.Load())[id] == string(name)) {
			return id + 1
		}
	}
}

// preResolveAhead is how many values ahead preResolve prefetches the slot
// it will probe.
const preResolveAhead = 16

// preResolve fills q.pre: the id + 1 in d of each value of q that d holds
// now, 0 for the others. Pass A calls it while pass B may be adding names
// to d.
func (q *pqDict) preResolve(d *dict) {
	q.pre, q.preIn = make([]uint32, len(q.dh)), d
	q.resolve(true)
}

// resolveAgain looks the values of q that q.pre does not hold up in q.preIn
// again: pass B may have added them since.
func (q *pqDict) resolveAgain() { q.resolve(false) }

// resolve looks up every value of q (all: q.pre is empty) or those that
// q.pre does not hold.
func (q *pqDict) resolve(all bool) {
	d, pre, dh := q.preIn, q.pre, q.dh
	t := d.pub.Load()
	slots, mask := t.slots, t.mask
	n := len(dh)
	for v := 0; v < n && v < preResolveAhead; v++ {
		if all || pre[v] == 0 {
			kern.PrefetchLine(unsafe.Pointer(&slots[dh[v].h&mask]))
		}
	}
	for v := range n {
		if k := v + preResolveAhead; k < n && (all || pre[k] == 0) {
			kern.PrefetchLine(unsafe.Pointer(&slots[dh[k].h&mask]))
		}
		if x := &dh[v]; (all || pre[v] == 0) && x.hi > x.lo {
			pre[v] = d.lookupShared(t, q.names[x.lo:x.hi], x.h, x.pre)
		}
	}
}
