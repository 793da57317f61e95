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
// B reaches their rows. What makes that safe without a lock:
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
//
// Readers compare names of at most 8 bytes only (prefix and length are the
// whole name); a longer name would need the names array, which pass B
// appends to, and is left to pass B.

// slotTable is a dictionary's table as published to readers.
type slotTable struct {
	slots []slot
	mask  uint64
}

// set fills an empty slot that readers may be probing (rule 1).
func (s *slot) set(tag, id uint32, pre uint64) {
	s.pre = pre
	atomic.StoreUint64((*uint64)(unsafe.Pointer(s)), uint64(tag)|uint64(id)<<32)
}

// load reads a slot's tag and id as set wrote them.
func (s *slot) load() (tag, id uint32) {
	w := atomic.LoadUint64((*uint64)(unsafe.Pointer(s)))
	return uint32(w), uint32(w >> 32)
}

// lookupShared looks up a name of n <= 8 bytes with hash h and prefix pre
// in table t, from any goroutine (see above). It returns the name's id + 1,
// or 0 when t does not hold it.
func lookupShared(t *slotTable, h, pre uint64, n int) uint32 {
	want := tagOf(h, n)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		tag, id := s.load()
		if tag == 0 {
			return 0
		}
		if tag == want && s.pre == pre {
			return id + 1
		}
	}
}

// preResolveAhead is how many values ahead preResolve prefetches the slot
// it will probe.
const preResolveAhead = 16

// preResolve fills q.pre: the id + 1 in d of each value of q that d holds
// now and that has at most 8 bytes, 0 for the others. Pass A calls it
// while pass B may be adding names to d.
func (q *pqDict) preResolve(d *dict) {
	t := d.pub.Load()
	dh := q.dh
	pre := make([]uint32, len(dh))
	for v := 0; v < len(dh) && v < preResolveAhead; v++ {
		kern.PrefetchLine(unsafe.Pointer(&t.slots[dh[v].h&t.mask]))
	}
	for v := range dh {
		if k := v + preResolveAhead; k < len(dh) {
			kern.PrefetchLine(unsafe.Pointer(&t.slots[dh[k].h&t.mask]))
		}
		x := &dh[v]
		if n := x.hi - x.lo; n <= 8 && n > 0 {
			pre[v] = lookupShared(t, x.h, x.pre, int(n))
		}
	}
	q.pre, q.preIn = pre, d
}
